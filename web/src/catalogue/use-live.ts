// The catalogue, live: while signed in, the page follows the change log (changes/follow.ts)
// and shows what other librarians change without a reload. An edit of a book on the page changes
// its row in place; a book deleted leaves it; a book added or restored shows if the page asked
// again holds it, else it is counted in a notice that offers to show it. Each row so changed is
// marked a moment. This tab's own changes are already shown, and are not marked again
// (own-writes.ts).
import {
  type Book,
  type BookCatalogueClient,
  CatalogueError,
  type Change,
  type SignedIn,
} from "book-catalogue";
import { useEffect, useRef, useState } from "preact/hooks";
import { type ChangeSource, followChanges } from "../changes/follow.js";
import { endsSession } from "../session.js";
import type { OwnWrites } from "./own-writes.js";
import type { ListingState } from "./use-listing.js";

/** How long a row changed by another librarian stays marked (its mark fades before). */
const MARKED_MS = 6000;
/** Books added meanwhile are looked for on the page at most this often. */
const REFRESH_MS = 300;
/** After a failure to find where the log is, the next try. */
const RETRY_MS = 10_000;

interface Props {
  client: BookCatalogueClient;
  me: SignedIn;
  /** The writes of this tab. */
  own: OwnWrites;
  listing: ListingState;
  /** Says a change for screen readers. */
  announce: (message: string) => void;
  fail: (error: unknown) => void;
}

/** Who made a change, for the page: "ana", or "Someone" for a tool of the store's own. */
export const whoDid = (change: Change) => change.by?.name ?? "Someone";

export type LiveState = ReturnType<typeof useLive>;

export function useLive({ client, me, own, listing, announce, fail }: Props) {
  const marks = useMarks();
  const latest = useRef({ listing, announce });
  latest.current = { listing, announce };
  const added = useAdded(() => latest.current.listing.refresh(), marks.mark);

  const apply = (change: Change) => {
    const { listing, announce } = latest.current;
    // A book deleted, by this tab too, is no longer looked for nor counted as new.
    if (change.op === "delete") added.forget(change.id);
    if (own.isOwn(change, me)) return;
    const shown = listing.books?.some((book) => book.id === change.id) ?? false;
    const book = change.book ?? change.before;
    const title = book ? `“${book.title}”` : "a book";
    if (change.op === "update" && shown && change.book) {
      const saved = change.book;
      listing.replace((books) => books.map((each) => (each.id === saved.id ? saved : each)));
      marks.mark(saved.id);
      announce(`${whoDid(change)} changed ${title}.`);
    } else if (change.op === "delete") {
      if (!shown) return;
      listing.replace((books) => books.filter((each) => each.id !== change.id), -1);
      announce(`${whoDid(change)} deleted ${title}.`);
      // The page asked again fills the place with the next book.
      added.look();
    } else if ((change.op === "create" || change.op === "restore") && change.book) {
      added.look(change.book);
    }
  };
  const following = useFollow(client, apply, {
    // The page may have been read before the entry followed from: read it again, quietly.
    started: () => void latest.current.listing.refresh(),
    gone: () => latest.current.listing.reload(),
    fail,
  });
  return { following, marked: marks.marked, unseen: added.unseen, clearUnseen: added.clear };
}

/**
 * Books added or restored by others: the page is asked again (at most every REFRESH_MS), and
 * each is marked there, or counted among the unseen, the newest last.
 */
function useAdded(refresh: ListingState["refresh"], mark: (id: number) => void) {
  const [unseen, setUnseen] = useState<Book[]>([]);
  const pending = useRef<Book[]>([]);
  // For each asking under way, the books deleted (by anyone, this tab too) since it began: its
  // answer may come after the delete, and they are not new books. Kept no longer than it.
  const asking = useRef(new Set<Set<number>>());
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);

  const ask = async () => {
    timer.current = undefined;
    // Those added before the page is asked for: the page answered holds them, if they belong.
    const looked = pending.current;
    pending.current = [];
    const deleted = new Set<number>();
    asking.current.add(deleted);
    const books = await refresh().finally(() => asking.current.delete(deleted));
    if (books === "failed") return;
    const kept = looked.filter((book) => !deleted.has(book.id));
    if (books === "superseded") return look(...kept);
    const shown = new Set(books.map((book) => book.id));
    for (const book of kept) if (shown.has(book.id)) mark(book.id);
    const elsewhere = kept.filter((book) => !shown.has(book.id));
    setUnseen((before) => [...before.filter((book) => !shown.has(book.id)), ...elsewhere]);
  };
  /** Asks for the page again soon, and looks for `books` (added or restored) there. */
  const look = (...books: Book[]) => {
    pending.current.push(...books);
    timer.current ??= setTimeout(ask, REFRESH_MS);
  };
  /** A book deleted: no longer looked for, nor counted. */
  const forget = (id: number) => {
    for (const deleted of asking.current) deleted.add(id);
    pending.current = pending.current.filter((book) => book.id !== id);
    setUnseen((before) => before.filter((book) => book.id !== id));
  };
  return { unseen, look, forget, clear: () => setUnseen([]) };
}

/**
 * Follows the log from its newest entry while mounted; `gone` (410) re-reads the page first.
 * True while following.
 */
function useFollow(
  client: BookCatalogueClient,
  apply: (change: Change) => void,
  on: { started: () => void; gone: () => void; fail: (error: unknown) => void },
) {
  const latest = useRef(apply);
  latest.current = apply;
  const [following, setFollowing] = useState(false);
  useEffect(() => {
    let stop = () => {};
    let retry: ReturnType<typeof setTimeout> | undefined;
    let current = true;
    const gone = () => {
      setFollowing(false);
      on.gone();
      void start();
    };
    const start = () =>
      client.newestChange().then(
        (since) => {
          if (!current) return;
          stop = followChanges<Change>(source(client), since, {
            change: (change) => latest.current(change),
            gone,
          });
          setFollowing(true);
          on.started();
        },
        (error: unknown) => {
          if (!current) return;
          if (endsSession(error)) on.fail(error);
          else retry = setTimeout(start, RETRY_MS);
        },
      );
    void start();
    return () => {
      current = false;
      clearTimeout(retry);
      stop();
    };
  }, [client]);
  return following;
}

/** The service the page is served by, and the client's token while it has one. */
const source = (client: BookCatalogueClient): ChangeSource => ({
  origin: location.origin,
  token: () =>
    client.token().catch((error: unknown) => {
      // Expired, and no password to renew it: the session asks for it (use-session.ts).
      if (error instanceof CatalogueError) return undefined;
      throw error;
    }),
});

/** The rows marked a moment, each for MARKED_MS from its last change. */
function useMarks() {
  const [marked, setMarked] = useState<ReadonlySet<number>>(new Set());
  const timers = useRef(new Map<number, ReturnType<typeof setTimeout>>());
  useEffect(() => () => timers.current.forEach(clearTimeout), []);
  const unmark = (id: number) => {
    timers.current.delete(id);
    setMarked((before) => new Set([...before].filter((each) => each !== id)));
  };
  const mark = (id: number) => {
    clearTimeout(timers.current.get(id));
    timers.current.set(
      id,
      setTimeout(() => unmark(id), MARKED_MS),
    );
    setMarked((before) => new Set([...before, id]));
  };
  return { marked, mark };
}
