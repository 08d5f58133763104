// The dialog open over the catalogue, if any: add or edit a book, import a file, delete, a
// book's history, or the books recently deleted.
import type { Book, BookCatalogueClient } from "book-catalogue";
import { BookDialog, ConfirmDelete } from "../book-dialog.js";
import { ImportDialog } from "../import/import-dialog.js";
import { HistoryDialog } from "./history-dialog.js";
import { RecentlyDeletedDialog } from "./recently-deleted.js";

export type Editing =
  | { mode: "add" }
  | { mode: "import" }
  | { mode: "edit"; book: Book }
  | { mode: "delete"; book: Book }
  | { mode: "history"; book: Book }
  | { mode: "deleted" };

interface Props {
  editing: Editing;
  client: BookCatalogueClient;
  /** After a change: what it did, for the page to announce. */
  onDone: (message: string) => void;
  /** After Add, besides onDone: the book as saved. */
  onAdded: (book: Book) => void;
  /** After Delete, besides onDone: the book deleted, for Undo. */
  onDeleted: (book: Book) => void;
  /** A book brought back from Recently deleted. */
  onRestored: (book: Book) => void;
  /** The client the import dialog adds books with. */
  importing: BookCatalogueClient;
  onCancel: () => void;
  onFailure: (error: unknown) => void;
}

export function EditingDialog(props: Props) {
  const { editing, client, onDone, onCancel, onFailure } = props;
  switch (editing.mode) {
    case "add":
    case "edit":
      return (
        <BookDialog
          client={client}
          book={editing.mode === "edit" ? editing.book : undefined}
          onDone={(book, outcome) => {
            if (outcome === "kept") onDone(`Kept the other librarian's “${book.title}”.`);
            else if (editing.mode === "edit") onDone(`Saved “${book.title}”.`);
            else {
              onDone(`Added “${book.title}”.`);
              props.onAdded(book);
            }
          }}
          onCancel={onCancel}
          onFailure={onFailure}
        />
      );
    case "import":
      return (
        <ImportDialog
          client={props.importing}
          onDone={onDone}
          onCancel={onCancel}
          onFailure={onFailure}
        />
      );
    case "delete":
      return (
        <ConfirmDelete
          client={client}
          book={editing.book}
          onDone={() => {
            onDone(`Deleted “${editing.book.title}”.`);
            props.onDeleted(editing.book);
          }}
          onCancel={onCancel}
          onFailure={onFailure}
        />
      );
    case "deleted":
      return (
        <RecentlyDeletedDialog
          client={client}
          onRestored={props.onRestored}
          onClose={onCancel}
          onFailure={onFailure}
        />
      );
    case "history":
      return (
        <HistoryDialog
          client={client}
          book={editing.book}
          onClose={onCancel}
          onFailure={onFailure}
        />
      );
  }
}
