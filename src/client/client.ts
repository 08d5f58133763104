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

  /** A book route: with the token, and once more with a fresh one should it be refused. */
  async function authorized<T>(
    method: string,
    path: string,
    body?: unknown,
    headers?: HeaderFields,
  ) {
    try {
      return await send<T>(method, path, body, { ...headers, authorization: await token() });
    } catch (error) {
      const renewable = username !== undefined && password !== undefined;
      if (!(error instanceof CatalogueError) || error.status !== 401 || !renewable) throw error;
      current = undefined;
      return send<T>(method, path, body, { ...headers, authorization: await token() });
    }
  }

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

type HeaderFields = Record<string, string>;

/** One request and its envelope's data; every failure a CatalogueError. */
async function sendRequest<T>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers?: HeaderFields,
) {
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...headers,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new CatalogueError(0, `cannot reach the service at ${base}: ${why(error)}`, {
      cause: error,
    });
  }
  let envelope: Envelope<T>;
  try {
    envelope = (await response.json()) as Envelope<T>;
  } catch {
    throw new CatalogueError(response.status, `unexpected answer (HTTP ${response.status})`);
  }
  if (!response.ok) {
    const reason = response.headers.get("problem-reason") ?? undefined;
    throw new CatalogueError(response.status, envelope.message, { reason: readable(reason) });
  }
  return { data: envelope.data, headers: response.headers };
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

/** Why a request got no answer, in a few words: Node's fetch puts the reason in the cause. */
function why(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
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
