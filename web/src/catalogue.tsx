// The catalogue once signed in: the toolbar, the table of books between two pagers, and the
// dialog open over them. Its parts are in catalogue/.

import type { Book, BookCatalogueClient, SignedIn } from "book-catalogue";
import { useRef, useState } from "preact/hooks";
import { BookTable } from "./catalogue/book-table.js";
import { type Editing, EditingDialog } from "./catalogue/editing-dialog.js";
import { EmptyNotice } from "./catalogue/empty-notice.js";
import { FailureNotice, useFailure } from "./catalogue/failure.js";
import { NewBooksNotice } from "./catalogue/new-books.js";
import { useOwnWrites } from "./catalogue/own-writes.js";
import { Pager } from "./catalogue/pager.js";
import { RecentlyDeletedButton } from "./catalogue/recently-deleted.js";
import { Toolbar } from "./catalogue/toolbar.js";
import { focusRowAt, UndoNotice } from "./catalogue/undo-delete.js";
import { useImportingClient } from "./catalogue/use-imported.js";
import { useListing } from "./catalogue/use-listing.js";
import { useLive } from "./catalogue/use-live.js";
import { useMoves } from "./catalogue/use-moves.js";
import { useWalk } from "./catalogue/use-walk.js";

interface Props {
  client: BookCatalogueClient;
  /** Who is signed in: the changes of other accounts are shown live, and marked. */
  me: SignedIn;
  /** Whether the role may add, edit, delete and import: else none of those is offered. */
  writable: boolean;
  onSessionEnded: (why: string) => void;
}

export function Catalogue({ me, writable, onSessionEnded, ...props }: Props) {
  const { client, own } = useOwnWrites(props.client);
  const walk = useWalk();
  const { failure, fail, clear } = useFailure(onSessionEnded);
  const listing = useListing(client, walk.query, {
    fail,
    answered: clear,
    cursorRefused: walk.dropCursor,
  });
  const { moves, pages, marked, showAdded } = useMoves(client, walk, listing, fail);
  const importing = useImportingClient(client, listing.reload);
  const [announcement, setAnnouncement] = useState("");
  const live = useLive({ client, me, own, listing, announce: setAnnouncement, fail });
  const { books, next, loading, reload } = listing;
  const dialogs = useDialogs(setAnnouncement, reload, showAdded);
  const { editing, setEditing, deleted, setDeleted, done, restored, add, importFile } = dialogs;
  /** Where the row of the book just deleted was: Escape on Undo leaves the focus there. */
  const deletedAt = useRef(0);
  const empty =
    !loading && !failure && walk.page === 1 && books?.length === 0 && next === undefined;

  const pager = { walk, listing, pages, moves };

  return (
    <section
      aria-labelledby="catalogue-title"
      class="catalogue"
      data-following={live.following ? "" : undefined}
    >
      <Toolbar
        client={client}
        walk={walk}
        total={listing.total}
        writable={writable}
        onAdd={add}
        onImport={importFile}
        onExported={setAnnouncement}
        onFailure={fail}
      />
      {empty && (
        <EmptyNotice
          q={walk.query.q}
          writable={writable}
          onClearSearch={walk.clearSearch}
          onAdd={add}
          onImport={importFile}
        />
      )}
      {failure && <FailureNotice failure={failure} onRetry={reload} />}
      <p class="visually-hidden" role="status">
        {announcement}
      </p>
      <NewBooksNotice live={live} onShow={showAdded} />
      {!empty && <Pager {...pager} place="above" />}
      <BookTable
        books={books}
        rows={pages === 1 ? books?.length : undefined}
        sort={walk.sort}
        loading={loading}
        hidden={empty}
        marked={marked}
        live={live.marked}
        writable={writable}
        onSort={walk.sortBy}
        onOpen={setEditing}
      />
      {!empty && <Pager {...pager} place="below" />}
      {writable && <RecentlyDeletedButton onOpen={() => setEditing({ mode: "deleted" })} />}
      <UndoNotice
        client={client}
        deleted={deleted}
        onRestored={restored}
        onDismiss={() => setDeleted(undefined)}
        onEscape={() => {
          setDeleted(undefined);
          focusRowAt(deletedAt.current);
        }}
        onFailure={fail}
      />
      {editing && (
        <EditingDialog
          editing={editing}
          client={client}
          importing={importing}
          onDone={done}
          onAdded={(book) => void showAdded(book)}
          onDeleted={(book) => {
            deletedAt.current = books?.findIndex((shown) => shown.id === book.id) ?? 0;
            setDeleted(book);
          }}
          onRestored={restored}
          onCancel={() => setEditing(undefined)}
          onFailure={fail}
        />
      )}
    </section>
  );
}

/** The dialog open over the catalogue, the book just deleted (for Undo), and how each ends. */
function useDialogs(
  announce: (message: string) => void,
  reload: () => void,
  showAdded: (book: Book, focus?: boolean) => Promise<void>,
) {
  const [editing, setEditing] = useState<Editing>();
  const [deleted, setDeleted] = useState<Book>();
  /** A change made: said, and the page asked again. */
  const done = (message: string) => {
    setEditing(undefined);
    announce(message);
    reload();
  };
  /** A book brought back (Undo, Recently deleted): shown on its page, marked. */
  const restored = (book: Book) => {
    setEditing(undefined);
    announce(`“${book.title}” is back.`);
    void showAdded(book, true);
  };
  const add = () => setEditing({ mode: "add" });
  const importFile = () => setEditing({ mode: "import" });
  return { editing, setEditing, deleted, setDeleted, done, restored, add, importFile };
}
