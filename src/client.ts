/**
 * A typed client for the Book Catalogue Service: the token is fetched when first needed and
 * renewed before it expires; every failure is a CatalogueError with the status and message.
 */

import type { Book, BookChanges, NewBook } from "./books/book.js";

export type { Book, BookChanges, NewBook };

/** GET /books parameters; all optional. */
export interface ListQuery {
  limit?: number;
  after?: number;
  q?: string;
  author?: string;
  year?: number;
}

export interface ClientOptions {
  baseUrl: string;
  username: string;
  password: string;
}

export interface BookCatalogueClient {
  /** A valid token, fetched or renewed as needed. */
  token(): Promise<string>;
  createBook(book: NewBook): Promise<Book>;
  getBook(id: number): Promise<Book>;
  updateBook(id: number, changes: BookChanges): Promise<Book>;
  deleteBook(id: number): Promise<void>;
  /** One page, and the query for the next one while more remain. */
  listPage(query?: ListQuery): Promise<{ books: Book[]; next: ListQuery | undefined }>;
  /** Every book the query selects, fetched page by page. */
  books(query?: Omit<ListQuery, "after">): AsyncGenerator<Book>;
}

/** A refusal or failure of the service: its HTTP status and the envelope's message. */
export class CatalogueError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "CatalogueError";
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
  let current: { token: string; expiresAt: number } | undefined;

  async function send<T>(method: string, path: string, body?: unknown, token?: string) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: token } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    let envelope: Envelope<T>;
    try {
      envelope = (await response.json()) as Envelope<T>;
    } catch {
      throw new CatalogueError(response.status, `unexpected answer (HTTP ${response.status})`);
    }
    if (!response.ok) throw new CatalogueError(response.status, envelope.message);
    return { data: envelope.data, link: response.headers.get("link") };
  }

  async function token(): Promise<string> {
    if (current && current.expiresAt - Date.now() > RENEW_BEFORE_MS) return current.token;
    const { data } = await send<{ token: string }>("POST", "/token", {
      username: options.username,
      password: options.password,
    });
    const payload = data.token.split(".")[1] ?? "";
    const { exp } = JSON.parse(Buffer.from(payload, "base64url").toString()) as { exp: number };
    current = { token: data.token, expiresAt: exp * 1000 };
    return data.token;
  }

  /** A book route: with the token, and once more with a fresh one should it be refused. */
  async function authorized<T>(method: string, path: string, body?: unknown) {
    try {
      return await send<T>(method, path, body, await token());
    } catch (error) {
      if (!(error instanceof CatalogueError) || error.status !== 401) throw error;
      current = undefined;
      return send<T>(method, path, body, await token());
    }
  }

  async function listPage(query: ListQuery = {}) {
    const parameters = new URLSearchParams(
      Object.entries(query).flatMap(([key, value]): [string, string][] =>
        value === undefined ? [] : [[key, String(value)]],
      ),
    );
    const suffix = parameters.size > 0 ? `?${parameters}` : "";
    const { data, link } = await authorized<Book[]>("GET", `/books${suffix}`);
    const after = link ? /[?&]after=(\d+)/.exec(link)?.[1] : undefined;
    return { books: data, next: after ? { ...query, after: Number(after) } : undefined };
  }

  return {
    token,
    createBook: async (book) => (await authorized<Book>("POST", "/book", book)).data,
    getBook: async (id) => (await authorized<Book>("GET", `/book/${id}`)).data,
    updateBook: async (id, changes) => (await authorized<Book>("PUT", `/book/${id}`, changes)).data,
    deleteBook: async (id) => {
      await authorized<null>("DELETE", `/book/${id}`);
    },
    listPage,
    async *books(query = {}) {
      let next: ListQuery | undefined = { limit: PAGE_SIZE, ...query };
      while (next) {
        const page = await listPage(next);
        yield* page.books;
        next = page.next;
      }
    },
  };
}
