import { useEffect, useRef, useState } from "preact/hooks";
import type { Book, BookCatalogueClient, ListQuery, SortOrder } from "../../src/client.js";
import { BookDialog, ConfirmDelete } from "./book-dialog.js";
import { ExportButtons } from "./export/export-buttons.js";
import { ImportDialog } from "./import/import-dialog.js";
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

type Editing =
  | { mode: "add" }
  | { mode: "import" }
  | { mode: "edit"; book: Book }
  | { mode: "delete"; book: Book };

const SORTS: readonly SortOrder[] = COLUMNS.flatMap(({ field }) => [field, `-${field}`] as const);
const DEFAULT_SORT: SortOrder = "title";

/** The pages walked, kept in the browser's history entry: Back, Forward and reload keep them. */
interface Walk {
  trail: ListQuery[];
  shownBefore: number[];
}

/** The query the address names: `?q=…&sort=…&after=…&after_key=…`. */
function queryOfAddress(): ListQuery {
  const parameters = new URLSearchParams(location.search);
  const sort = parameters.get("sort") as SortOrder | null;
  const q = parameters.get("q")?.trim();
  const query: ListQuery = {
    limit: PAGE_SIZE,
    sort: sort !== null && SORTS.includes(sort) ? sort : DEFAULT_SORT,
    ...(q ? { q } : {}),
  };
  const after = Number(parameters.get("after"));
  if (Number.isSafeInteger(after) && after > 0) {
    query.after = after;
    const key = parameters.get("after_key");
    if (key !== null) query.afterKey = key;
  }
  return query;
}

function addressOf(query: ListQuery): string {
  const parameters = new URLSearchParams();
  if (query.q) parameters.set("q", query.q);
  if (query.sort && query.sort !== DEFAULT_SORT) parameters.set("sort", query.sort);
  if (query.after !== undefined) parameters.set("after", String(query.after));
  if (query.afterKey !== undefined) parameters.set("after_key", String(query.afterKey));
  return parameters.size > 0 ? `?${parameters}` : location.pathname;
}

/** The walk of this history entry (a reload, Back or Forward), else the address's one page. */
function currentWalk(): Walk {
  const kept = history.state as Walk | null;
  if (kept?.trail?.length) return kept;
  return { trail: [queryOfAddress()], shownBefore: [0] };
}

/** Screen readers hear what a sort heading does: by text A to Z, by year oldest first. */
function sortWords(field: Column, direction: "ascending" | "descending" | undefined) {
  const [up, down] = field === "year" ? ["oldest first", "newest first"] : ["A to Z", "Z to A"];
  if (direction === "ascending") return `, sorted ${up}; sort ${down}`;
  if (direction === "descending") return `, sorted ${down}; sort ${up}`;
  return `, sort ${up}`;
}

export function Catalogue({ client, onSessionEnded }: Props) {
  const [start] = useState(currentWalk);
  const [search, setSearch] = useState(start.trail.at(-1)?.q ?? "");
  const [sort, setSort] = useState<SortOrder>(start.trail.at(-1)?.sort ?? DEFAULT_SORT);
  // The pages walked so far, each as its query (a cursor never an offset): the last is shown.
  const [trail, setTrail] = useState<ListQuery[]>(start.trail);
  // How many books the pages before each one of the trail showed: a search of very many
  // matches may answer a page with fewer than PAGE_SIZE books, and more after it.
  const [shownBefore, setShownBefore] = useState<number[]>(start.shownBefore);
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

  // The address follows the page shown: a new entry for each step, so Back goes back. A walk
  // restored from the history (Back, Forward) is already where it belongs.
  const restored = useRef(false);
  useEffect(() => {
    if (restored.current) {
      restored.current = false;
      return;
    }
    const address = addressOf(query);
    const walk: Walk = { trail, shownBefore };
    if (address === (location.search || location.pathname)) history.replaceState(walk, "", address);
    else history.pushState(walk, "", address);
  }, [trail]);
  useEffect(() => {
    const onPopState = () => {
      const walk = currentWalk();
      const shown = walk.trail.at(-1);
      restored.current = true;
      setTrail(walk.trail);
      setShownBefore(walk.shownBefore);
      setSearch(shown?.q ?? "");
      setSort(shown?.sort ?? DEFAULT_SORT);
    };
    addEventListener("popstate", onPopState);
    return () => removeEventListener("popstate", onPopState);
  }, []);
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
  const empty = !loading && !failure && page === 1 && books?.length === 0 && next === undefined;
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
        <div class="tool-buttons">
          <button type="button" onClick={() => setEditing({ mode: "add" })}>
            Add a book
          </button>
          <button type="button" class="secondary" onClick={() => setEditing({ mode: "import" })}>
            Import a file
          </button>
          <ExportButtons
            client={client}
            q={query.q}
            disabled={total === 0}
            onDone={setAnnouncement}
            onFailure={fail}
          />
        </div>
      </div>

      {empty &&
        (query.q ? (
          <div class="empty">
            <p>
              No book matches “<strong>{query.q}</strong>”: search matches the start of words in
              titles and authors.
            </p>
            <button
              type="button"
              onClick={() => {
                setSearch("");
                restart({ q: "" });
              }}
            >
              Clear the search
            </button>
          </div>
        ) : (
          <div class="empty">
            <p>
              <strong>The catalogue is empty.</strong> Add the first book, or import a file: a CSV
              or JSON list of books, or a Goodreads library export.
            </p>
            <div class="tool-buttons">
              <button type="button" onClick={() => setEditing({ mode: "add" })}>
                Add a book
              </button>
              <button
                type="button"
                class="secondary"
                onClick={() => setEditing({ mode: "import" })}
              >
                Import a file
              </button>
            </div>
          </div>
        ))}

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

      <div class="table-frame" style={{ "--rows": PAGE_SIZE }} hidden={empty}>
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
                      <span class="visually-hidden">{sortWords(field, direction)}</span>
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
                <td data-label="Title" class="col-title" title={book.title}>
                  {book.title}
                </td>
                <td data-label="Author" class="col-author" title={book.author}>
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
      {editing?.mode === "import" && (
        <ImportDialog
          client={client}
          onDone={done}
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
