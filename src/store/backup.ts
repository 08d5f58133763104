// What a backup needs from a store, beside serving books: one consistent snapshot to read
// while the catalogue keeps serving, and a restore that keeps every id, all or nothing.
import { type Book, MAX_BOOK_ID } from "../rules/book.js";
import type { StoredAccount } from "./accounts.js";

/** One consistent view of the whole catalogue: every book committed before it began. */
export interface CatalogueSnapshot {
  /** How many books the snapshot holds. */
  readonly count: number;
  /** The id the next new book would take: above every id ever given, deleted books' too. */
  readonly nextId: number;
  /** The snapshot's books in id order, a page at a time; other work goes on between pages. */
  pages(): AsyncIterable<Book[]>;
  /** Every account of the snapshot, in id order, with its password's hash. */
  readonly accounts: readonly StoredAccount[];
}

export interface BackupStore {
  /** Runs `read` on one snapshot, and ends the snapshot when it settles. */
  readSnapshot<T>(read: (snapshot: CatalogueSnapshot) => Promise<T>): Promise<T>;
  /**
   * Writes the books with their ids in one transaction, and moves the next id to at least
   * `nextId`: all or nothing. A catalogue that holds books is refused (CatalogueNotEmptyError)
   * unless `replace`, which removes them in the same transaction. Resolves with the id the
   * next new book takes: `nextId`, or the catalogue's own when that is higher.
   *
   * With `accounts`, they replace the catalogue's, ids and all, in the same transaction, and a
   * catalogue that holds accounts counts as not empty; without (a backup of format 1), the
   * catalogue's accounts are left as they are.
   */
  restore(
    pages: AsyncIterable<Book[]>,
    nextId: number,
    replace: boolean,
    accounts?: readonly StoredAccount[],
  ): Promise<number>;
  close(): Promise<void>;
}

/** What a backup or restore reads a page at a time. */
export const BACKUP_PAGE_SIZE = 1000;

/** A restore would mix the backup's books, or accounts, with those already there. */
export class CatalogueNotEmptyError extends Error {
  constructor(
    readonly count: number,
    readonly accounts = 0,
  ) {
    super(`the catalogue already holds ${count} books and ${accounts} accounts`);
    this.name = "CatalogueNotEmptyError";
  }
}

/**
 * Refuses a restore's next id that would let a create pass MAX_BOOK_ID: one past it, that of a
 * catalogue which gave it, is the highest. The stores refuse a book's id past it themselves.
 */
export function checkRestoredNextId(nextId: number): void {
  if (!Number.isInteger(nextId) || nextId < 1 || nextId > MAX_BOOK_ID + 1) {
    throw new RangeError(
      `the next id ${nextId} is past the largest id a book can have (${MAX_BOOK_ID})`,
    );
  }
}
