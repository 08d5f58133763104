// The writes this tab made: their entries in the change log are shown already, and are not
// news here. Another tab of the same account (or another librarian signed in as the built-in
// user) is another librarian: its writes are shown live.
import type { BookCatalogueClient, Change, SignedIn } from "book-catalogue";
import { useMemo } from "preact/hooks";

/** How long a book this tab wrote stays its own: its entry comes within this. */
const OWN_MS = 30_000;

export interface OwnWrites {
  /** The client this tab writes with: each write is noted. */
  track(client: BookCatalogueClient): BookCatalogueClient;
  /** Whether the entry is of a write of this tab. */
  isOwn(change: Change, me: SignedIn): boolean;
}

/** The client the catalogue writes with, each write noted, and what was noted. */
export function useOwnWrites(client: BookCatalogueClient) {
  const own = useMemo(ownWrites, []);
  return { own, client: useMemo(() => own.track(client), [client]) };
}

function ownWrites(): OwnWrites {
  const books = new Map<number, number>();
  // Books being added: their ids are known only once answered, and the entry may come first.
  let adding = 0;
  const note = (id: number) => {
    const now = Date.now();
    for (const [each, until] of books) if (until < now) books.delete(each);
    books.set(id, now + OWN_MS);
  };
  const noting =
    <A extends unknown[], R>(write: (id: number, ...rest: A) => Promise<R>) =>
    (id: number, ...rest: A) => {
      note(id);
      return write(id, ...rest);
    };

  return {
    track: (client) => ({
      ...client,
      createBook: async (book) => {
        adding += 1;
        try {
          const added = await client.createBook(book);
          note(added.id);
          return added;
        } finally {
          adding -= 1;
        }
      },
      updateBook: noting(client.updateBook),
      updateTaggedBook: noting(client.updateTaggedBook),
      deleteBook: noting(client.deleteBook),
      restore: noting(client.restore),
    }),
    isOwn(change, me) {
      if (change.by?.name !== me.name || change.by.account !== me.id) return false;
      if ((books.get(change.id) ?? 0) >= Date.now()) return true;
      return change.op === "create" && adding > 0;
    },
  };
}
