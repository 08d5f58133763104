// What the SQLite store keeps of its reads (listing pages, books by id) and when what is kept
// may answer: the one place that decides.
import type { DatabaseSync } from "node:sqlite";
import type { Book } from "../../rules/book.js";
import { createBookCache, createPageCache } from "../read-caches.js";
import type { BookPage } from "../store.js";
import type { Changed } from "./group-commit.js";

export interface KeptReads {
  /** The page kept for `key`, or the one `read` gives, then kept until the catalogue changes. */
  page(key: string, read: () => BookPage): BookPage;
  /** As a read transaction begins (the turn's shared read): whether books kept may serve it. */
  beginRead(): void;
  /** The book kept, or the one `read` gives, then kept. Only inside a read begun as above. */
  book(id: number, read: (id: number) => Book | undefined): Book | undefined;
  /** The writer has committed: what it changed is forgotten (everything, when not known). */
  committed(changed: Changed | undefined): void;
}

/**
 * Pages are kept until any commit: PRAGMA data_version moves when another connection commits,
 * and the writer's commits are told. Books are kept across the writer's commits, each
 * forgetting only the books it changed: the change count (migration 10), read as a read
 * begins, must be the one the kept books are true at. A count the writer's reports do not
 * reach is another connection's change once no write of this process is on its way, and
 * everything kept is forgotten; until then books are read, not kept.
 */
export function createKeptReads(
  db: DatabaseSync,
  changeCount: () => number,
  writesInFlight: () => number,
): KeptReads {
  const pages = createPageCache();
  const books = createBookCache();
  const dataVersionStmt = db.prepare("PRAGMA data_version");
  let version: number | undefined;
  /** The change count the kept books are true at. */
  let known: number | undefined;
  /** Whether the open read may use and keep books; undefined: to be found as the next begins. */
  let usable: boolean | undefined;

  const checkVersion = () => {
    const now = dataVersionStmt.get()?.data_version as number;
    if (now === version) return;
    version = now;
    pages.clear();
    usable = undefined;
  };
  return {
    page(key, read) {
      checkVersion();
      let page = pages.get(key);
      if (page === undefined) {
        page = read();
        pages.set(key, page);
      }
      return page;
    },
    beginRead() {
      checkVersion();
      if (usable !== undefined) return;
      const count = changeCount();
      if (count !== known && writesInFlight() === 0) {
        books.clear();
        known = count;
      }
      usable = count === known;
    },
    book(id, read) {
      if (!usable) return read(id);
      const kept = books.get(id);
      if (kept !== undefined) return kept;
      const book = read(id);
      if (book !== undefined) books.set(book);
      return book;
    },
    committed(changed) {
      pages.clear();
      if (changed !== undefined && changed.from === known) {
        for (const id of changed.ids) books.forget(id);
      } else {
        books.clear();
      }
      known = changed?.to;
      usable = undefined;
    },
  };
}
