// The page of books the walk has reached, asked of the service, and how many books match.

import {
  type Book,
  type BookCatalogueClient,
  CatalogueError,
  type ListQuery,
} from "book-catalogue";
import { useEffect, useRef, useState } from "preact/hooks";

interface Outcome {
  /** A refused or failed request. */
  fail: (error: unknown) => void;
  /** A page answered: any failure shown before is over. */
  answered: () => void;
  /** The service refused the page's cursor (a link cut short, say): the walk drops it. */
  cursorRefused: () => void;
}

/**
 * Whether the service refused `query` for its cursor: a 400 for a page that starts after a
 * book. The page sends only a search with a word and an order it offers (use-address.ts), so
 * what the service can still refuse is the cursor: an `after` without the `after_key` its
 * order needs, or a key that is no title, author or year.
 */
export function refusesCursor(query: ListQuery, error: unknown): boolean {
  return query.after !== undefined && error instanceof CatalogueError && error.status === 400;
}

export type ListingState = ReturnType<typeof useListing>;

/**
 * How many books `query`'s filters match, asked on its own so that the rows never wait for
 * it: PostgreSQL counts 10^7 books in about a second, and refuses to count a word that common
 * (400). Undefined when it could not be counted: the pages are then not numbered.
 */
function countBooks(client: BookCatalogueClient, query: ListQuery): Promise<number | undefined> {
  // The filters only: the count is the same on every page, and a cursor may be refused.
  const { q, author, year } = query;
  return client.listPage({ q, author, year, limit: 1 }, { count: true }).then(
    (page) => page.total,
    () => undefined,
  );
}

export function useListing(client: BookCatalogueClient, query: ListQuery, outcome: Outcome) {
  const [books, setBooks] = useState<Book[]>();
  const [next, setNext] = useState<ListQuery>();
  // How many books the search matches, and which search that is: asked for with the first page
  // of each search and after each change, not with every page (the service counts only when
  // asked). Another search's count is never shown.
  const [count, setCount] = useState<{ q: string; n: number }>();
  const counted = useRef<string>();
  // What the rows shown answer: until it is the current query, they are the old rows, dimmed.
  const [settled, setSettled] = useState<{ query: ListQuery; reload: number }>();
  const [reloads, setReloads] = useState(0);

  const loading = settled?.query !== query || settled.reload !== reloads;
  const total = count?.q === (query.q ?? "") ? count.n : undefined;
  // Each load of the page: a quiet refresh answered after another load began is dropped.
  const loads = useRef(0);
  const recount = (q: string, key: string, stillWanted: () => boolean) =>
    countBooks(client, query).then((n) => {
      if (!stillWanted()) return;
      counted.current = key;
      if (n !== undefined) setCount({ q, n });
    });
  useEffect(() => {
    let current = true;
    loads.current += 1;
    const reload = reloads;
    const q = query.q ?? "";
    const countKey = JSON.stringify([q, reload]);
    if (counted.current !== countKey) void recount(q, countKey, () => current);
    client.listPage(query).then(
      (page) => {
        if (!current) return;
        setBooks(page.books);
        setNext(page.next);
        outcome.answered();
        setSettled({ query, reload });
      },
      (error) => {
        if (!current) return;
        if (refusesCursor(query, error)) return outcome.cursorRefused();
        outcome.fail(error);
        setSettled({ query, reload });
      },
    );
    return () => {
      current = false;
    };
  }, [query, reloads]);

  /** Asks again for the page shown, and the count: after a change, or a failure. */
  const reload = () => setReloads((n) => n + 1);
  /**
   * Asks again for the page shown and the count, the rows staying as they are meanwhile (not
   * dimmed): for another librarian's change. Resolves with the page's books; "superseded" when
   * another load began meanwhile (its page is the one shown), "failed" when the request did.
   */
  const refresh = async (): Promise<Book[] | "superseded" | "failed"> => {
    const load = loads.current;
    const q = query.q ?? "";
    void recount(q, JSON.stringify([q, reloads]), () => load === loads.current);
    const page = await client.listPage(query).catch(() => undefined);
    if (load !== loads.current) return "superseded";
    if (page === undefined) return "failed";
    setBooks(page.books);
    setNext(page.next);
    return page.books;
  };
  /**
   * Changes the rows shown in place (another librarian's edit, say), and the count by
   * `counted` (-1 for a book shown that was deleted).
   */
  const replace = (change: (books: Book[]) => Book[], counted = 0) => {
    setBooks((shown) => (shown === undefined ? shown : change(shown)));
    if (counted !== 0) setCount((before) => before && { ...before, n: before.n + counted });
  };
  return { books, next, total, loading, reload, refresh, replace };
}
