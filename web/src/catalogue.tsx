import { useEffect, useRef, useState } from "preact/hooks";
import type { Book, BookCatalogueClient, ListQuery, SortOrder } from "../../src/client.js";
import { BookDialog, ConfirmDelete } from "./book-dialog.js";
import { describeFailure, endsSession } from "./session.js";

/** Books a page: the table keeps room for this many rows, so nothing jumps while it loads. */
export const PAGE_SIZE = 20;
const COLUMNS = [
  { field: "title", label: "Title" },
  { field: "author", label: "Author" },
  { field: "year", label: "Year" },
] as const;
type Column = (typeof COLUMNS)[number]["field"];

interface Props {
  client: BookCatalogueClient;
  onSessionEnded: (why: string) => void;
}

type Editing = { mode: "add" } | { mode: "edit"; book: Book } | { mode: "delete"; book: Book };

export function Catalogue({ client, onSessionEnded }: Props) {
  const [search, setSearch] = useState("");
  const [sort, setSort] = useState<SortOrder>("title");
  // The pages walked so far, each as its query (a cursor never an offset): the last is shown.
  const [trail, setTrail] = useState<ListQuery[]>([{ limit: PAGE_SIZE, sort: "title" }]);
  // How many books the pages before each one of the trail showed: a search of very many
  // matches may answer a page with fewer than PAGE_SIZE books, and more after it.
  const [shownBefore, setShownBefore] = useState<number[]>([0]);
  const [books, setBooks] = useState<Book[]>();
  const [next, setNext] = useState<ListQuery>();
  // How many books the search matches: asked for with the first page of each search and after
  // each change, not with every page (the service counts only when asked).
  const [total, setTotal] = useState<number>();
  const counted = useRef<string>();
  // What the rows shown answer: until it is the current query, they are the old rows, dimmed.
  const [settled, setSettled] = useState<{ query: ListQuery; reload: number }>();
  const [failure, setFailure] = useState<string>();
  const [announcement, setAnnouncement] = useState("");
  const [editing, setEditing] = useState<Editing>();
  const [reloads, setReloads] = useState(0);
  const searchTimer = useRef<ReturnType<typeof setTimeout>>();

  /** What every call does with a failure: a 401 ends the session, the rest is shown. */
  const fail = (error: unknown) => {
    if (endsSession(error)) {
      onSessionEnded(describeFailure(error));
    } else {
      setFailure(describeFailure(error));
    }
  };

  const query = trail[trail.length - 1] as ListQuery;
  const loading = settled?.query !== query || settled.reload !== reloads;
  useEffect(() => {
    let current = true;
    const reload = reloads;
    const countKey = JSON.stringify([query.q ?? "", reload]);
    const count = counted.current !== countKey;
    client.listPage(query, { count }).then(
      (page) => {
        if (!current) return;
        setBooks(page.books);
        setNext(page.next);
        if (page.total !== undefined) {
          counted.current = countKey;
          setTotal(page.total);
        }
        setFailure(undefined);
        setSettled({ query, reload });
      },
      (error) => {
        if (!current) return;
        fail(error);
        setSettled({ query, reload });
      },
    );
    return () => {
      current = false;
    };
  }, [query, reloads]);

  const restart = (changes: { q?: string; sort?: SortOrder }) => {
    const q = (changes.q ?? search).trim();
    const order = changes.sort ?? sort;
    setTrail([{ limit: PAGE_SIZE, sort: order, ...(q ? { q } : {}) }]);
    setShownBefore([0]);
  };

  const onSearchInput = (value: string) => {
    setSearch(value);
    clearTimeout(searchTimer.current);
    searchTimer.current = setTimeout(() => restart({ q: value }), 300);
  };

  const sortBy = (field: Column) => {
    const order: SortOrder = sort === field ? `-${field}` : field;
    setSort(order);
    restart({ sort: order });
  };

  const page = trail.length;
  const first = (shownBefore[page - 1] ?? 0) + 1;
  const status = loading
    ? "Loading…"
    : books === undefined || books.length === 0
      ? next !== undefined
        ? "None in this stretch of the catalogue: Next searches on."
        : page > 1
          ? "No more books here: go back a page."
          : search.trim()
            ? `No book matches “${search.trim()}”.`
            : "The catalogue is empty."
      : `Page ${page}: books ${first} to ${first + books.length - 1}.`;

  const searched = query.q;
  const totalText =
    total === undefined
      ? ""
      : `${total.toLocaleString("en")} ${total === 1 ? "book" : "books"}${searched ? ` match “${searched}”` : ""}`;

  const done = (message: string) => {
    setEditing(undefined);
    setAnnouncement(message);
    setReloads((n) => n + 1);
  };

  return (
    <section aria-labelledby="catalogue-title" class="catalogue">
      <div class="tools">
        <div>
          <h2 id="catalogue-title">Books</h2>
          <p id="book-count" class="count">
            {totalText}
          </p>
        </div>
        <search>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              clearTimeout(searchTimer.current);
              restart({});
            }}
          >
            <label for="search">Search titles and authors</label>
            <input
              id="search"
              type="search"
              value={search}
              onInput={(event) => onSearchInput(event.currentTarget.value)}
              maxLength={200}
            />
          </form>
        </search>
        <button type="button" onClick={() => setEditing({ mode: "add" })}>
          Add a book
        </button>
      </div>

      {failure && (
        <div class="error" role="alert">
          {failure}{" "}
          <button type="button" class="quiet" onClick={() => setReloads((n) => n + 1)}>
            Try again
          </button>
        </div>
      )}
      <p class="visually-hidden" role="status">
        {announcement}
      </p>

      <div class="table-frame" style={{ "--rows": PAGE_SIZE }}>
        <table aria-busy={loading} aria-describedby="page-status">
          <thead>
            <tr>
              {COLUMNS.map(({ field, label }) => {
                const direction =
                  sort === field ? "ascending" : sort === `-${field}` ? "descending" : undefined;
                return (
                  <th key={field} scope="col" aria-sort={direction} class={`col-${field}`}>
                    <button type="button" class="sort" onClick={() => sortBy(field)}>
                      {label}
                      <span aria-hidden="true" class="arrow">
                        {direction === "ascending" ? "▲" : direction === "descending" ? "▼" : ""}
                      </span>
                      <span class="visually-hidden">
                        {direction === "ascending" ? ", sorted A to Z; sort Z to A" : ", sort"}
                      </span>
                    </button>
                  </th>
                );
              })}
              <th scope="col" class="col-actions">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(books ?? []).map((book) => (
              <tr key={book.id}>
                <td data-label="Title" class="col-title">
                  {book.title}
                </td>
                <td data-label="Author" class="col-author">
                  {book.author}
                </td>
                <td data-label="Year" class="col-year">
                  {book.year}
                </td>
                <td class="col-actions">
                  <button
                    type="button"
                    class="quiet"
                    aria-label={`Edit “${book.title}”`}
                    onClick={() => setEditing({ mode: "edit", book })}
                  >
                    Edit
                  </button>
                  <button
                    type="button"
                    class="quiet danger"
                    aria-label={`Delete “${book.title}”`}
                    onClick={() => setEditing({ mode: "delete", book })}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <nav class="pages" aria-label="Pages">
        <button
          type="button"
          disabled={loading || page === 1}
          onClick={() => {
            setTrail(trail.slice(0, -1));
            setShownBefore(shownBefore.slice(0, -1));
          }}
        >
          Previous
        </button>
        <span id="page-status" aria-live="polite">
          {status}
        </span>
        <button
          type="button"
          disabled={loading || next === undefined}
          onClick={() => {
            if (next === undefined) return;
            setTrail([...trail, next]);
            setShownBefore([...shownBefore, first - 1 + (books?.length ?? 0)]);
          }}
        >
          Next
        </button>
      </nav>

      {(editing?.mode === "add" || editing?.mode === "edit") && (
        <BookDialog
          client={client}
          book={editing.mode === "edit" ? editing.book : undefined}
          onDone={(saved) =>
            done(editing.mode === "add" ? `Added “${saved.title}”.` : `Saved “${saved.title}”.`)
          }
          onCancel={() => setEditing(undefined)}
          onFailure={fail}
        />
      )}
      {editing?.mode === "delete" && (
        <ConfirmDelete
          client={client}
          book={editing.book}
          onDone={() => done(`Deleted “${editing.book.title}”.`)}
          onCancel={() => setEditing(undefined)}
          onFailure={fail}
        />
      )}
    </section>
  );
}
