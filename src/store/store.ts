import type { Book, BookChanges, NewBook } from "../rules/book.js";
import type { SearchTerm } from "../rules/search.js";
import type { AccountStore } from "./accounts.js";
import type { ExpectedVersions } from "./book-version.js";
import type { ChangedBy, ChangeLog } from "./changes.js";

/** A page of books, in the query's order, already encoded for the wire. */
export interface BookPage {
  /** The books as compact JSON objects joined by commas: what goes between `[` and `]`. */
  json: string;
  count: number;
  /** The last book's id, where the next page starts; 0 for an empty page. */
  lastId: number;
  /** The last book's sort value (title, author or year) when sorted by one; else null. */
  lastKey: string | number | null;
  /**
   * A search stopped at its bound of work before the page was full: more books may follow,
   * from the cursor lastId/lastKey, which then names the last book examined.
   */
  partial?: boolean;
}

/** The orders a listing can take: by id (the default), or by a field with the id after it. */
export const SORT_FIELDS = ["id", "title", "author", "year"] as const;
export type SortField = (typeof SORT_FIELDS)[number];

/** Which books a listing page holds: those after a cursor, in an order, matching every filter. */
export interface BookQuery {
  /**
   * The last book of the previous page; 0 for the first page. In ascending id order, only
   * books with a greater id. Sorted by a field, only books after (afterKey, after).
   */
  after: number;
  /** The sort value of the book `after` names; needed when sorting by a field. */
  afterKey?: string | number;
  /** By id when absent. Titles and authors compare by their sort keys (rules/search.ts). */
  sort?: SortField;
  descending?: boolean;
  limit: number;
  /** Every term starts a word of the title or of the author (see books/search.ts). */
  search?: readonly SearchTerm[];
  /** The author, exactly. */
  author?: string;
  year?: number;
  /**
   * When the request's search began (Date.now()): all its reads (pages, the look for a next
   * one, the count) share the store's one time limit from then, and one that would end past
   * it is refused (SearchTooBroadError). Absent, a read has the limit to itself.
   */
  searchStarted?: number;
  /**
   * How long, since then, the request's reads have waited for the store itself (a connection,
   * a pooler holding them, a store restarting): added to by the store, shared by the reads.
   * That time is the store's, not the search's: it spends none of the limit.
   */
  searchWaited?: { ms: number };
}

/**
 * The filters of a query: which books match, whatever the page and the order (and when its
 * search began).
 */
export type BookFilters = Pick<
  BookQuery,
  "search" | "author" | "year" | "searchStarted" | "searchWaited"
>;

/** What a page kept for a query is kept under: the query, whenever its search began. */
export function pageKey(query: BookQuery): string {
  const { searchStarted: _, searchWaited: __, ...selected } = query;
  return JSON.stringify(selected);
}

/**
 * The ms left to a search begun at `started` with `limitMs` in all (the whole limit when
 * unknown); SearchTooBroadError when none are.
 */
export function searchTimeLeft(
  started: number | undefined,
  limitMs: number,
  waited?: { ms: number },
): number {
  const left = started === undefined ? limitMs : started + (waited?.ms ?? 0) + limitMs - Date.now();
  if (left <= 0) throw new SearchTooBroadError();
  return left;
}

/**
 * A book as a single-book read or write gives it: with when it was last changed (created,
 * updated or restored), ms since the epoch, which the routes send as Last-Modified and never in
 * the body; null for a book unchanged since before the change log (migration 14).
 */
export interface StoredBook extends Book {
  changedAt?: number | null;
}

/** What the routes need from storage. Absence is `undefined`/`false`, never an exception. */
export interface BookStore {
  get(id: number): Promise<StoredBook | undefined>;
  /**
   * The books the query selects, in its order. The database encodes them: several times
   * cheaper than building objects to stringify (docs/performance.md).
   */
  list(query: BookQuery): Promise<BookPage>;
  /** How many books match the filters, whatever the page. */
  count(filters: BookFilters): Promise<number>;
  /**
   * Each write that changes a book appends its entry to the change log (changes.ts) in the
   * same transaction, naming `by`. Rejects with BookIdsExhaustedError once the store has given
   * MAX_BOOK_ID.
   */
  create(book: NewBook, by?: ChangedBy): Promise<StoredBook>;
  /**
   * Applies the present fields on top of the stored record; `undefined` when there is none.
   * With `expected`, only while the book's version is one of them (checked in the write's own
   * transaction), else BookChangedError and nothing written. An update with no field present
   * changes nothing and logs nothing.
   */
  update(
    id: number,
    changes: BookChanges,
    expected?: ExpectedVersions,
    by?: ChangedBy,
  ): Promise<StoredBook | undefined>;
  /** True when a book was deleted. `expected` as for update. */
  remove(id: number, expected?: ExpectedVersions, by?: ChangedBy): Promise<boolean>;
  /**
   * Brings a deleted book back, with its id and the values its delete's entry kept;
   * `undefined` when no entry of the book is kept, BookExistsError when it is not deleted.
   */
  restore(id: number, by?: ChangedBy): Promise<StoredBook | undefined>;
  /** Resolves when the store answers; rejects with StoreUnavailableError when it does not. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** The accounts kept in the same database; absent in a store a test makes of parts. */
  readonly accounts?: AccountStore;
  /** The change log kept in the same database; absent in a store a test makes of parts. */
  readonly changes?: ChangeLog;
}

/** The store cannot be reached right now; the request may succeed later (HTTP 503). */
export class StoreUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the book store is unavailable", options);
    this.name = "StoreUnavailableError";
  }
}

/**
 * The store has no space for the write (a full disk): nothing of it was written, reads go on,
 * and writes succeed again once there is space (HTTP 503 with Retry-After).
 */
export class StoreFullError extends StoreUnavailableError {
  constructor(options?: { cause?: unknown }) {
    super(options);
    this.message = "the book store has no space for writes";
    this.name = "StoreFullError";
  }
}

/**
 * The store has given the largest id a book can have (MAX_BOOK_ID): a create is refused,
 * nothing of it written, while reads, updates and deletes go on (HTTP 503).
 */
export class BookIdsExhaustedError extends StoreUnavailableError {
  constructor() {
    super();
    this.message = "the book store has given the largest id a book can have";
    this.name = "BookIdsExhaustedError";
  }
}

/** A search would cost more than a request may: its time limit has passed. */
export class SearchTooBroadError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the search would take too long", options);
    this.name = "SearchTooBroadError";
  }
}

/** A conditional write found the book at another version than expected (HTTP 412). */
export class BookChangedError extends Error {
  constructor() {
    super("the book has changed");
    this.name = "BookChangedError";
  }
}

/** The store could not be opened or its schema prepared; start-up must stop. */
export class StoreOpenError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreOpenError";
  }
}
