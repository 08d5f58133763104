/**
 * A typed client for the Book Catalogue Service: the token is fetched when first needed and
 * renewed before it expires; every failure is a CatalogueError with the status and message.
 * It runs in Node.js 20+ and in browsers (the librarian's page uses it).
 */

import type { Book, BookChanges, NewBook } from "../rules/book.js";

export type { Book, BookChanges, NewBook };

/** A listing's order: by id (the default), title, author or year; a leading - reverses it. */
export type SortOrder = `${"" | "-"}${"id" | "title" | "author" | "year"}`;

/** GET /books parameters; all optional. */
export interface ListQuery {
  limit?: number;
  sort?: SortOrder;
  /** The cursor: the last book of the previous page (its id, and its sort value). */
  after?: number;
  afterKey?: string | number;
  q?: string;
  author?: string;
  year?: number;
}

/** An account's role: `reader` reads, `librarian` also writes books, `admin` also accounts. */
export type Role = "reader" | "librarian" | "admin";

/** An account, as an administrator sees it: never its password. */
export interface Account {
  id: number;
  name: string;
  role: Role;
  enabled: boolean;
}

export interface NewAccount {
  name: string;
  role: Role;
  /** At least 12 characters. */
  password: string;
  /** false: added disabled, no login until enabled; true when absent. */
  enabled?: boolean;
}

/** Any of these; a new password, or `enabled: false`, ends the account's tokens at once. */
export interface AccountChanges {
  role?: Role;
  enabled?: boolean;
  password?: string;
}

/** Who a token signs in: an account, or the built-in pair (id null, an administrator). */
export interface SignedIn {
  id: number | null;
  name: string;
  role: Role;
}

/** What an entry of the change log records: a book created, updated, deleted or restored. */
export type ChangeOp = "create" | "update" | "delete" | "restore";

/** One entry of the change log, as GET /changes and a book's history send it. */
export interface Change {
  /** Its place in the log: it only grows. `since` goes on after it. */
  seq: number;
  op: ChangeOp;
  /** The book's id. */
  id: number;
  /** The book after the change; null for a delete. */
  book: Book | null;
  /** The book before it; null for a create or a restore. */
  before: Book | null;
  /** When it was committed: an ISO 8601 time, UTC. */
  at: string;
  /** Who made it (account null for the built-in pair); null when no request did. */
  by: { name: string; account: number | null } | null;
}

/** One page of the change log, and the `since` of the next. */
export interface ChangesPage {
  changes: Change[];
  /** The last entry's `seq` (`since` again when the page is empty): where to go on from. */
  next: number;
}

export interface ChangesOptions {
  /**
   * The entries after this sequence: 0 from the first (a ChangesGoneError once the log has
   * been trimmed), else the last `seq` handled.
   */
  since: number;
  /** Ends the iteration: the iterator then throws the signal's reason. */
  signal?: AbortSignal;
}

export interface ClientOptions {
  baseUrl: string;
  /** The credentials, to fetch tokens and renew them; without them, only `token` is used. */
  username?: string;
  password?: string;
  /** A token to use while it lasts (one kept by a browser tab, say). */
  token?: string;
  /** Called with each token fetched, and when it expires (ms since the epoch). */
  onToken?: (token: string, expiresAt: number) => void;
}

export interface BookCatalogueClient {
  /** A valid token, fetched or renewed as needed. */
  token(): Promise<string>;
  createBook(book: NewBook): Promise<Book>;
  getBook(id: number): Promise<Book>;
  updateBook(id: number, changes: BookChanges): Promise<Book>;
  /** With `ifMatch` (an ETag), only while the book is at that version: else a 412. */
  deleteBook(id: number, options?: { ifMatch?: string }): Promise<void>;
  /** The book and its version (ETag), to change it later only as it was read. */
  getTaggedBook(id: number): Promise<TaggedBook>;
  /**
   * Changes the book only while it is at the version `ifMatch` names; a CatalogueError with
   * status 412 ("Book has changed") when another save came first, and nothing is written.
   */
  updateTaggedBook(id: number, changes: BookChanges, ifMatch: string): Promise<TaggedBook>;
  /**
   * One page, and the query for the next one while more remain. With `count`, also the number
   * of books the query's filters match on every page (counted only when asked).
   */
  listPage(query?: ListQuery, options?: { count?: boolean }): Promise<BookListPage>;
  /** Every book the query selects, fetched page by page. */
  books(query?: Omit<ListQuery, "after">): AsyncGenerator<Book>;
  /** Who the token signs in, and their role. */
  signedIn(): Promise<SignedIn>;
  /**
   * The signed-in account's new password, given its current one. Every token of the account
   * ends; this client signs in again with the new password when it has credentials.
   */
  changeOwnPassword(current: string, password: string): Promise<void>;
  /** For administrators (else a CatalogueError with status 403): every account. */
  listAccounts(): Promise<Account[]>;
  createAccount(account: NewAccount): Promise<Account>;
  updateAccount(id: number, changes: AccountChanges): Promise<Account>;
  deleteAccount(id: number): Promise<void>;
  /** One page of the change log after `since` (at most `limit` entries, 100 unless given). */
  changesPage(query: { since: number; limit?: number }): Promise<ChangesPage>;
  /** The newest sequence of the change log (0 before the first): where to follow it from now. */
  newestChange(): Promise<number>;
  /**
   * Every entry after `since`, then each one as it is committed, once and in order: it follows
   * the service's stream, and when the stream ends (its token expired) or the connection
   * fails, reconnects after the last entry it gave, with a fresh token when needed. Gives up
   * after a few failures in a row (the error of the last); a ChangesGoneError (410) when the
   * entries after `since` are no longer kept.
   */
  changes(options: ChangesOptions): AsyncGenerator<Change>;
  /** Every kept entry of one book, deleted or not, in order; 404 for a book never kept. */
  history(id: number): Promise<Change[]>;
  /** A deleted book back, with its id and last values; 409 `Book exists` when not deleted. */
  restore(id: number): Promise<Book>;
}

/** A book with its version: the ETag the service sent it with. */
export interface TaggedBook {
  book: Book;
  etag: string;
}

export interface BookListPage {
  books: Book[];
  /** The query for the next page; undefined on the last one. */
  next: ListQuery | undefined;
  /** With `count`: how many books the filters match, on every page. */
  total: number | undefined;
}

/**
 * A refusal or failure of the service: its HTTP status and the envelope's message. The status
 * is 0 when no answer came (the service cannot be reached); `cause` then says why.
 */
export class CatalogueError extends Error {
  /**
   * Why a 400 refused the request, from the service's `Problem-Reason` header: the field or
   * parameter and its rule (`title: at most 500 characters`). Words for people, not for code.
   */
  readonly reason: string | undefined;

  constructor(
    readonly status: number,
    message: string,
    options?: { cause?: unknown; reason?: string | undefined },
  ) {
    super(message, options);
    this.name = "CatalogueError";
    this.reason = options?.reason;
  }
}

/**
 * GET /changes answered 410 (`Changes no longer kept`): entries after the `since` asked for
 * have been trimmed. Read the catalogue again (`books()`), then go on from `resumeSince`.
 */
export class ChangesGoneError extends CatalogueError {
  constructor(
    message: string,
    /** The oldest sequence kept: a `since` of one less is still served. */
    readonly oldestKept: number,
    /** The newest sequence when refused: the `since` to follow from once the catalogue is read. */
    readonly resumeSince: number,
  ) {
    super(410, message);
    this.name = "ChangesGoneError";
  }
}

interface Envelope<T> {
  status: number;
  message: string;
  data: T;
}

// A token is renewed when it has less than this left, so no request carries a dying one.
const RENEW_BEFORE_MS = 60_000;
const PAGE_SIZE = 500;

export function createClient(options: ClientOptions): BookCatalogueClient {
  const base = options.baseUrl.replace(/\/+$/, "");

  const send = <T>(method: string, path: string, body?: unknown, headers?: HeaderFields) =>
    sendRequest<T>(base, method, path, body, headers);

  const { username } = options;
  let { password } = options;
  let current = options.token
    ? { token: options.token, expiresAt: expiresAt(options.token) }
    : undefined;

  async function token(): Promise<string> {
    const left = current ? current.expiresAt - Date.now() : 0;
    if (current && left > RENEW_BEFORE_MS) return current.token;
    if (username === undefined || password === undefined) {
      if (current && left > 0) return current.token;
      throw new CatalogueError(401, "the token has expired and no credentials were given");
    }
    const { data } = await send<{ token: string }>("POST", "/token", { username, password });
    current = { token: data.token, expiresAt: expiresAt(data.token) };
    options.onToken?.(current.token, current.expiresAt);
    return data.token;
  }

  /** A call with the token, and once more with a fresh one should it be refused. */
  async function withToken<T>(call: (authorization: string) => Promise<T>): Promise<T> {
    try {
      return await call(await token());
    } catch (error) {
      const renewable = username !== undefined && password !== undefined;
      if (!(error instanceof CatalogueError) || error.status !== 401 || !renewable) throw error;
      current = undefined;
      return call(await token());
    }
  }

  /** A book route, with the token. */
  const authorized = <T>(method: string, path: string, body?: unknown, headers?: HeaderFields) =>
    withToken((authorization) => send<T>(method, path, body, { ...headers, authorization }));

  async function listPage(query: ListQuery = {}, options: { count?: boolean } = {}) {
    const prefer: HeaderFields = options.count ? { prefer: "count=exact" } : {};
    const path = `/books${queryString(query)}`;
    const { data, headers } = await authorized<Book[]>("GET", path, undefined, prefer);
    const counted = headers.get("x-total-count");
    const total = counted === null ? undefined : Number(counted);
    return { books: data, next: nextQuery(query, headers.get("link")), total };
  }

  return {
    token,
    createBook: async (book) => (await authorized<Book>("POST", "/book", book)).data,
    getBook: async (id) => (await authorized<Book>("GET", `/book/${id}`)).data,
    updateBook: async (id, changes) => (await authorized<Book>("PUT", `/book/${id}`, changes)).data,
    deleteBook: async (id, { ifMatch } = {}) => {
      await authorized<null>("DELETE", `/book/${id}`, undefined, ifMatchHeader(ifMatch));
    },
    getTaggedBook: async (id) => tagged(await authorized<Book>("GET", `/book/${id}`)),
    updateTaggedBook: async (id, changes, ifMatch) =>
      tagged(await authorized<Book>("PUT", `/book/${id}`, changes, ifMatchHeader(ifMatch))),
    listPage,
    async *books(query = {}) {
      let next: ListQuery | undefined = { limit: PAGE_SIZE, ...query };
      while (next) {
        const page = await listPage(next);
        yield* page.books;
        next = page.next;
      }
    },
    ...accountCalls(authorized, (newPassword) => {
      if (password !== undefined) password = newPassword;
      current = undefined;
    }),
    ...changeCalls(authorized),
    changes: (changesOptions) => followChanges(changeStream(base, withToken), changesOptions),
  };
}

type Authorized = <T>(
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ data: T; headers: Headers }>;

type AccountCalls = Pick<
  BookCatalogueClient,
  | "signedIn"
  | "changeOwnPassword"
  | "listAccounts"
  | "createAccount"
  | "updateAccount"
  | "deleteAccount"
>;

/** The account routes; `passwordChanged` is told of the client's own new password. */
function accountCalls(
  authorized: Authorized,
  passwordChanged: (password: string) => void,
): AccountCalls {
  return {
    signedIn: async () => (await authorized<SignedIn>("GET", "/accounts/me")).data,
    changeOwnPassword: async (oldPassword, newPassword) => {
      const change = { current: oldPassword, password: newPassword };
      await authorized<null>("PUT", "/accounts/me/password", change);
      passwordChanged(newPassword);
    },
    listAccounts: async () => (await authorized<Account[]>("GET", "/accounts")).data,
    createAccount: async (account) =>
      (await authorized<Account>("POST", "/accounts", account)).data,
    updateAccount: async (id, changes) =>
      (await authorized<Account>("PATCH", `/accounts/${id}`, changes)).data,
    deleteAccount: async (id) => {
      await authorized<null>("DELETE", `/accounts/${id}`);
    },
  };
}

// A book's history is read in pages of the most the service gives.
const HISTORY_PAGE = 1000;

/** The change log's routes, but for the stream (followChanges). */
function changeCalls(
  authorized: Authorized,
): Pick<BookCatalogueClient, "changesPage" | "newestChange" | "history" | "restore"> {
  return {
    changesPage: async ({ since, limit }) => {
      const query = `?since=${since}${limit === undefined ? "" : `&limit=${limit}`}`;
      const { data, headers } = await authorized<Change[]>("GET", `/changes${query}`);
      const next = linkSince(headers.get("link")) ?? data.at(-1)?.seq ?? since;
      return { changes: data, next };
    },
    newestChange: async () => {
      const { headers } = await authorized<Change[]>("GET", "/changes?since=now&limit=1");
      return linkSince(headers.get("link")) ?? 0;
    },
    history: async (id) => {
      const entries: Change[] = [];
      for (let since = 0; ; ) {
        const path = `/book/${id}/history?since=${since}&limit=${HISTORY_PAGE}`;
        const { data } = await authorized<Change[]>("GET", path);
        entries.push(...data);
        const last = data.at(-1);
        if (last === undefined || data.length < HISTORY_PAGE) return entries;
        since = last.seq;
      }
    },
    restore: async (id) => (await authorized<Book>("POST", `/book/${id}/restore`)).data,
  };
}

type HeaderFields = Record<string, string>;

/** One request and its envelope's data; every failure a CatalogueError. */
async function sendRequest<T>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers?: HeaderFields,
) {
  const response = await reach(base, path, {
    method,
    headers: {
      ...headers,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw await refusal(response);
  let envelope: Envelope<T>;
  try {
    envelope = (await response.json()) as Envelope<T>;
  } catch {
    throw new CatalogueError(response.status, `unexpected answer (HTTP ${response.status})`);
  }
  return { data: envelope.data, headers: response.headers };
}

/** The service's answer; a CatalogueError of status 0 when none came. */
async function reach(base: string, path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(`${base}${path}`, init);
  } catch (error) {
    throw new CatalogueError(0, `cannot reach the service at ${base}: ${why(error)}`, {
      cause: error,
    });
  }
}

/** A refusal as an error: its status and the envelope's message (and what a 410 says). */
async function refusal(response: Response): Promise<CatalogueError> {
  let envelope: Envelope<unknown>;
  try {
    envelope = (await response.json()) as Envelope<unknown>;
  } catch {
    return new CatalogueError(response.status, `unexpected answer (HTTP ${response.status})`);
  }
  const oldest = response.headers.get("changes-oldest-kept");
  if (response.status === 410 && oldest !== null) {
    const resume = linkSince(response.headers.get("link")) ?? Number(oldest) - 1;
    return new ChangesGoneError(envelope.message, Number(oldest), resume);
  }
  const reason = response.headers.get("problem-reason") ?? undefined;
  return new CatalogueError(response.status, envelope.message, { reason: readable(reason) });
}

/** A reason as sent (printable ASCII, the rest percent-encoded), decoded for people. */
function readable(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  try {
    return decodeURIComponent(reason);
  } catch {
    return reason;
  }
}

const ifMatchHeader = (etag: string | undefined): HeaderFields =>
  etag === undefined ? {} : { "if-match": etag };

const tagged = ({ data, headers }: { data: Book; headers: Headers }): TaggedBook => ({
  book: data,
  etag: headers.get("etag") ?? "",
});

/** A listing's query string: `?…`, or nothing for no parameter. */
function queryString(query: ListQuery): string {
  const { afterKey, ...rest } = query;
  const parameters = new URLSearchParams(
    Object.entries({ ...rest, after_key: afterKey }).flatMap(([key, value]): [string, string][] =>
      value === undefined ? [] : [[key, String(value)]],
    ),
  );
  return parameters.size > 0 ? `?${parameters}` : "";
}

/** The query of the next page, from the Link header; undefined on the last page. */
function nextQuery(query: ListQuery, link: string | null): ListQuery | undefined {
  const target = link ? /^<([^>]*)>/.exec(link)?.[1] : undefined;
  if (target === undefined) return undefined;
  const cursor = new URL(target, "http://link").searchParams;
  const next: ListQuery = { ...query, after: Number(cursor.get("after")) };
  const key = cursor.get("after_key");
  if (key !== null) next.afterKey = key;
  return next;
}

/** The `since` of a Link header's target (`</changes?since=N…>`); undefined without one. */
function linkSince(link: string | null): number | undefined {
  const target = link ? /^<([^>]*)>/.exec(link)?.[1] : undefined;
  const since =
    target === undefined ? null : new URL(target, "http://link").searchParams.get("since");
  return since === null || !/^[0-9]+$/.test(since) ? undefined : Number(since);
}

/** Why a request got no answer, in a few words: Node's fetch puts the reason in the cause. */
function why(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Opens GET /changes as a stream from after `since`: its body, or the refusal as an error. */
type OpenChanges = (since: number, signal: AbortSignal) => Promise<ReadableStream<Uint8Array>>;

/** GET /changes as a stream of events, from after `since`, with the token. */
function changeStream(
  base: string,
  withToken: <T>(call: (authorization: string) => Promise<T>) => Promise<T>,
): OpenChanges {
  return (since, signal) =>
    withToken(async (authorization) => {
      const headers = { authorization, accept: "text/event-stream" };
      const response = await reach(base, `/changes?since=${since}`, { headers, signal });
      if (!response.ok) throw await refusal(response);
      const type = response.headers.get("content-type") ?? "";
      if (!type.startsWith("text/event-stream") || response.body === null) {
        throw new CatalogueError(response.status, `unexpected answer (HTTP ${response.status})`);
      }
      return response.body;
    });
}

// Failures in a row before the follower gives up, and the waits between its tries: doubled
// each time from the service's `retry:` (1 s until it gives one), at most MAX_WAIT_MS.
const FOLLOW_TRIES = 6;
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 30_000;
// A stream that ends sooner than this having given nothing counts as a failure.
const QUICK_END_MS = 1_000;
// A stream silent this long (the service sends a heartbeat every 15 s) is taken for a
// connection lost unseen (a laptop asleep, a NAT forgetting it) and opened again.
const SILENT_MS = 90_000;
const CHANGE_OPS: readonly string[] = ["create", "update", "delete", "restore"];

/**
 * The change stream, followed across its ends: each entry once, in order, reconnecting after
 * the last one given; failures of the connection or the service (0, 429, 5xx) are tried again.
 */
async function* followChanges(open: OpenChanges, options: ChangesOptions): AsyncGenerator<Change> {
  const { signal } = options;
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  let last = options.since;
  let failures = 0;
  let waitMs = FIRST_WAIT_MS;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const opened = Date.now();
      const parser = eventStreamParser();
      let given = false;
      try {
        for await (const event of readEvents(await open(last, stop.signal), parser)) {
          const change = changeOf(event);
          if (change === undefined || change.seq <= last) continue;
          last = change.seq;
          given = true;
          failures = 0;
          yield change;
        }
        // The service ended it (the token expired, a restart): again at once.
        if (given || Date.now() - opened >= QUICK_END_MS) continue;
        throw new CatalogueError(0, "the change stream ended as soon as it began");
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (!retryable(error) || ++failures >= FOLLOW_TRIES) throw error;
        waitMs = parser.retry ?? waitMs;
        await pause(Math.min(waitMs * 2 ** (failures - 1), MAX_WAIT_MS), stop.signal);
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    stop.abort();
  }
}

/** Worth trying again: no answer, too many streams, or the service failing for now. */
const retryable = (error: unknown) =>
  error instanceof CatalogueError &&
  (error.status === 0 || error.status === 429 || error.status >= 500);

/** A wait of about `ms` (jittered, so that followers do not all come back at once). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms * (0.75 + Math.random() / 2));
    signal.addEventListener("abort", done, { once: true });
  });
}

/** An event's entry; undefined for an event of another type. */
function changeOf(event: StreamEvent): Change | undefined {
  if (!CHANGE_OPS.includes(event.event)) return undefined;
  try {
    return JSON.parse(event.data) as Change;
  } catch {
    throw new CatalogueError(200, `unexpected answer (an entry that is not JSON: ${event.id})`);
  }
}

/**
 * The events of a stream's body as they come, until it ends or falls silent; a cut connection
 * is a CatalogueError of status 0.
 */
async function* readEvents(
  body: ReadableStream<Uint8Array>,
  parser: EventStreamParser,
): AsyncGenerator<StreamEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const chunk = await readWithin(reader, SILENT_MS).catch((error: unknown) => {
        throw new CatalogueError(0, `the change stream was cut: ${why(error)}`, { cause: error });
      });
      if (chunk === undefined || chunk.done) return;
      yield* parser.push(decoder.decode(chunk.value, { stream: true }));
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** The reader's next chunk; undefined when none came within `ms`. */
async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silence = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    return await Promise.race([reader.read(), silence]);
  } finally {
    clearTimeout(timer);
  }
}

/** One event of a text/event-stream: its type, its data, and the stream's last id. */
export interface StreamEvent {
  event: string;
  data: string;
  id: string;
}

export interface EventStreamParser {
  /** The events the text completes (with the text before it). */
  push(text: string): StreamEvent[];
  /** The wait before reconnecting the stream asked for, in ms; undefined until it does. */
  readonly retry: number | undefined;
}

/**
 * A text/event-stream parser, as browsers parse one: lines end in CRLF, LF or CR (a CRLF may
 * be split between two chunks), data lines join with LF, a blank line ends an event,
 * comments (`:`) and unknown fields are skipped, and an event without data is none.
 */
export function eventStreamParser(): EventStreamParser {
  let rest = "";
  let afterCr = false;
  let data: string[] = [];
  let event = "";
  let id = "";
  let retry: number | undefined;
  const line = (text: string, events: StreamEvent[]) => {
    if (text === "") {
      if (data.length > 0) events.push({ event: event || "message", data: data.join("\n"), id });
      data = [];
      event = "";
      return;
    }
    const colon = text.indexOf(":");
    if (colon === 0) return;
    const field = colon === -1 ? text : text.slice(0, colon);
    const value = colon === -1 ? "" : text.slice(colon + (text[colon + 1] === " " ? 2 : 1));
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id" && !value.includes("\0")) id = value;
    else if (field === "retry" && /^[0-9]+$/.test(value)) retry = Number(value);
  };
  return {
    push(text) {
      const events: StreamEvent[] = [];
      let all = rest + text;
      if (afterCr && all.startsWith("\n")) all = all.slice(1);
      let start = 0;
      for (const end of all.matchAll(/\r\n|\r|\n/g)) {
        line(all.slice(start, end.index), events);
        start = end.index + end[0].length;
      }
      afterCr = all.endsWith("\r");
      rest = all.slice(start);
      return events;
    },
    get retry() {
      return retry;
    },
  };
}

/** When a token expires (ms since the epoch), read from its payload; 0 when unreadable. */
export function expiresAt(token: string): number {
  try {
    const payload = (token.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/");
    const { exp } = JSON.parse(atob(payload)) as { exp?: unknown };
    return typeof exp === "number" ? exp * 1000 : 0;
  } catch {
    return 0;
  }
}
