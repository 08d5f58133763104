// Listing pages kept in this instance while no commit anywhere has changed books
// (commit-counter.ts): the one place that decides whether a kept page may answer. Books read by
// id are not kept: the version such a book needs is a round trip, as the book's own read is
// (one statement for every read that arrives together, batching.ts), and keeping them won
// nothing in the A/B (docs/architecture.md).
import type { Book } from "../../rules/book.js";
import { createPageCache } from "../read-caches.js";
import { type BookPage, type BookQuery, pageKey } from "../store.js";
import type { Batched } from "./batching.js";
import { selectBooks } from "./books.js";
import { createCommitCounter } from "./commit-counter.js";
import { withStoreErrors } from "./errors.js";
import type { Listing } from "./listing.js";
import type { Db } from "./pool.js";

export interface KeptReads {
  get(id: number): Promise<Book | undefined>;
  list(query: BookQuery): Promise<BookPage>;
}

export function createKeptReads(db: Db, batched: Batched, listing: Listing): KeptReads {
  const pages = createPageCache();
  const counter = createCommitCounter(db);
  let pagesVersion: string | undefined;
  let pagesRead = 0;
  /**
   * The version a read found, with the pages kept emptied when it has changed. Only a read
   * that began after the latest one may move the version the pages are kept at.
   */
  async function freshVersion(): Promise<string> {
    const { version, read } = await counter.latest();
    if (read > pagesRead) {
      pagesRead = read;
      if (version !== pagesVersion) {
        pages.clear();
        pagesVersion = version;
      }
    }
    return version;
  }
  const readBooks = batched((ids: readonly number[]) =>
    withStoreErrors(() => selectBooks(db, ids)),
  );

  return {
    get: readBooks,
    async list(query) {
      // The version is read before the page, so a page kept under a version holds every
      // commit it counts; a later commit changes the version, and the pages kept are forgotten.
      const asked = Date.now();
      const version = await freshVersion();
      const key = pageKey(query);
      const kept = version === pagesVersion ? pages.get(key) : undefined;
      if (kept !== undefined) return kept;
      // The wait for the version is the store's, not the search's: it spends none of its time.
      if (query.searchWaited !== undefined) query.searchWaited.ms += Date.now() - asked;
      const page = await listing.list(query);
      if (version === pagesVersion) pages.set(key, page);
      return page;
    },
  };
}
