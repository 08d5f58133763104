// Reads by id and listing pages kept in this instance while no commit anywhere has changed
// books (commit-counter.ts): the one place that decides whether what is kept may answer.
import type { Book } from "../../rules/book.js";
import { createReadCaches } from "../read-caches.js";
import { type BookPage, type BookQuery, pageKey } from "../store.js";
import type { Batched } from "./batching.js";
import { selectBooks } from "./books.js";
import { createCommitCounter, type Validator } from "./commit-counter.js";
import { withStoreErrors } from "./errors.js";
import type { Listing } from "./listing.js";
import type { Db } from "./pool.js";

export interface KeptReads {
  get(id: number): Promise<Book | undefined>;
  list(query: BookQuery): Promise<BookPage>;
}

export function createKeptReads(db: Db, batched: Batched, listing: Listing): KeptReads {
  const caches = createReadCaches<string>();
  const counter = createCommitCounter(db);
  let cachesRead = 0;
  /**
   * The version a read found, with what is kept emptied when it has changed. A reader keeps
   * and uses what is kept only while its version is still the caches': one whose read began
   * before the latest keeps nothing.
   */
  function seen({ version, read }: Validator): string {
    if (read > cachesRead) {
      cachesRead = read;
      if (version !== caches.version) caches.moveTo(version);
    }
    return version;
  }
  const freshVersion = async () => seen(await counter.latest());
  // Reads by id that arrive together go in one statement (batching.ts), which
  // reads the version beside the books: a book not kept costs one round trip, not two.
  const readBooks = batched((ids: readonly number[]) =>
    withStoreErrors(async () => {
      const read = counter.claimRead();
      const { books, version } = await selectBooks(db, ids);
      return books.map((book) => ({ book, version, read }));
    }),
  );

  return {
    async get(id) {
      // As listing pages: a book read under the latest version is kept until it changes.
      // One kept is used once the version is found unchanged; one not kept is read anew.
      if (caches.books.get(id) !== undefined) {
        const version = await freshVersion();
        const kept = version === caches.version ? caches.books.get(id) : undefined;
        if (kept !== undefined) return kept;
      }
      const { book, ...validator } = await readBooks(id);
      const version = seen(validator);
      if (book !== undefined && version === caches.version) caches.books.set(book);
      return book;
    },
    async list(query) {
      // The version is read before the page, so a page kept under a version holds every
      // commit it counts; a later commit changes the version, and the pages kept are forgotten.
      const asked = Date.now();
      const version = await freshVersion();
      const key = pageKey(query);
      const kept = version === caches.version ? caches.pages.get(key) : undefined;
      if (kept !== undefined) return kept;
      // The wait for the version is the store's, not the search's: it spends none of its time.
      if (query.searchWaited !== undefined) query.searchWaited.ms += Date.now() - asked;
      const page = await listing.list(query);
      if (version === caches.version) caches.pages.set(key, page);
      return page;
    },
  };
}
