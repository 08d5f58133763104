// The version of the book a dialog changes: read when the dialog opens, so that a save or a
// delete goes only onto the book as the librarian saw it (If-Match), and read again when
// another librarian's save came first.
import {
  type Book,
  type BookCatalogueClient,
  CatalogueError,
  type TaggedBook,
} from "book-catalogue";
import { useEffect, useState } from "preact/hooks";

export interface BookVersion {
  /** The book as stored and its ETag; undefined until read, or for a new book. */
  tagged: TaggedBook | undefined;
  /** The book is no longer in the catalogue. */
  gone: boolean;
  /** Reads the stored book again: its version now, or undefined when it is gone. */
  reload(): Promise<TaggedBook | undefined>;
}

/** Whether an error is the service refusing a save made on an older version (412). */
export const isChanged = (error: unknown) =>
  error instanceof CatalogueError && error.status === 412;

export function useBookVersion(
  client: BookCatalogueClient,
  book: Book | undefined,
  onFailure: (error: unknown) => void,
): BookVersion {
  const [tagged, setTagged] = useState<TaggedBook>();
  const [gone, setGone] = useState(false);

  async function reload(): Promise<TaggedBook | undefined> {
    if (book === undefined) return undefined;
    try {
      const read = await client.getTaggedBook(book.id);
      setTagged(read);
      return read;
    } catch (error) {
      if (error instanceof CatalogueError && error.status === 404) setGone(true);
      else onFailure(error);
      return undefined;
    }
  }

  useEffect(() => {
    void reload();
  }, [book?.id]);

  return { tagged, gone, reload };
}
