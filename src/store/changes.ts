// The change log (an extension): every create, update, delete and restore of a book appends
// one entry in the same transaction as the change, numbered by a sequence that only grows.
// Each store implements ChangeLog next to its BookStore; the routes never see SQL.
import type { Book } from "../rules/book.js";

/** Who made a change: an account, or the built-in pair (account null). */
export interface ChangedBy {
  name: string;
  account: number | null;
}

export const CHANGE_OPS = ["create", "update", "delete", "restore"] as const;
export type ChangeOp = (typeof CHANGE_OPS)[number];

/** One entry of the log. */
export interface Change {
  seq: number;
  op: ChangeOp;
  /** The book's id. */
  id: number;
  /** The book after the change; null for a delete. */
  book: Book | null;
  /** The book before it; null for a create or a restore. */
  before: Book | null;
  /** When, in ms since the epoch. */
  at: number;
  /** Who; null for a change made without a request (a test, a tool of the store's own). */
  by: ChangedBy | null;
}

/** How much of the log is kept: entries younger than `days`, and at most `entries` of them. */
export interface ChangesKept {
  days: number;
  entries: number;
}

export interface ChangeLog {
  /**
   * The entries after `since`, in sequence order, at most `limit`; ChangesGoneError when
   * entries after `since` are no longer kept.
   */
  list(since: number, limit: number): Promise<Change[]>;
  /** The entries of one book after `since`, in sequence order, at most `limit`. */
  history(id: number, since: number, limit: number): Promise<Change[]>;
  /** The newest sequence given; 0 before the first. */
  latest(): Promise<number>;
  /** Removes what `kept` no longer keeps; resolves with how many entries went. */
  trim(kept: ChangesKept): Promise<number>;
  /**
   * Where the store can be told of other processes' commits (PostgreSQL's LISTEN): calls
   * `onChange` after each, and `onTrouble` with why it cannot. Absent: the log is polled.
   */
  watch?(onChange: () => void, onTrouble: (message: string) => void): { close(): Promise<void> };
}

/** Entries after the `since` asked for are no longer kept (HTTP 410). */
export class ChangesGoneError extends Error {
  /** @param oldest the oldest sequence that is, or will be, kept: `since` may be one less. */
  constructor(readonly oldest: number) {
    super(`changes before ${oldest} are no longer kept`);
    this.name = "ChangesGoneError";
  }
}

/** A restore of a book that is not deleted (HTTP 409). */
export class BookExistsError extends Error {
  constructor() {
    super("the book exists");
    this.name = "BookExistsError";
  }
}

/** The columns of an entry as both stores read them. */
export interface ChangeRow {
  seq: number;
  op: string;
  book_id: number;
  after: string | null;
  before: string | null;
  at: number;
  who: string | null;
  account_id: number | null;
}

export const CHANGE_COLUMNS = "seq, op, book_id, after, before, at, who, account_id";

export function changeOf(row: ChangeRow): Change {
  return {
    seq: row.seq,
    op: row.op as ChangeOp,
    id: row.book_id,
    book: row.after === null ? null : (JSON.parse(row.after) as Book),
    before: row.before === null ? null : (JSON.parse(row.before) as Book),
    at: row.at,
    by: row.who === null ? null : { name: row.who, account: row.account_id },
  };
}

/** A book as an entry keeps it: its JSON, keys in the envelope's order. */
export const bookJson = (book: Book) =>
  JSON.stringify({ id: book.id, title: book.title, author: book.author, year: book.year });

/** Entries removed by one trim at most, so that no trim holds the store's writer long. */
const TRIM_SLICE = 10_000;

/**
 * The last sequence a trim removes so that what is kept holds: entries of `at` before the
 * cutoff, and those beyond the newest `entries`; TRIM_SLICE of them at most from `first`, the
 * oldest kept (newest + 1 when none is). `oldestYoung` is the first entry young enough to keep
 * (undefined when none is). Below `first`: nothing to remove.
 */
export function trimThrough(
  kept: ChangesKept,
  newest: number,
  oldestYoung: number | undefined,
  first: number,
): number {
  const byAge = oldestYoung === undefined ? newest : oldestYoung - 1;
  return Math.min(Math.max(byAge, newest - kept.entries), first - 1 + TRIM_SLICE);
}

export const keptCutoff = (kept: ChangesKept, now = Date.now()) => now - kept.days * 86_400_000;
