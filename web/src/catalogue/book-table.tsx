// The page's books, one row each, under headings that sort; on a phone the rows are cards.
import type { Book, SortOrder } from "book-catalogue";
import { COLUMNS, type Column, PAGE_SIZE } from "./query.js";

/** What a row's buttons open. */
export type RowAction = { mode: "history" | "edit" | "delete"; book: Book };

type Direction = "ascending" | "descending" | undefined;

interface Props {
  books: Book[] | undefined;
  /**
   * The rows to keep room for: a listing of one page, its own; else (undefined) a whole page,
   * so that the pager below stays where it is from page to page, the last one too.
   */
  rows: number | undefined;
  sort: SortOrder;
  /** The rows shown are the last page's, dimmed, until the page asked for comes. */
  loading: boolean;
  hidden: boolean;
  /** The book just added: its row is marked a moment. */
  marked: number | undefined;
  /** The books another librarian just changed: their rows are marked a moment. */
  live: ReadonlySet<number>;
  /** Whether each book offers Edit and Delete (History, every book). */
  writable: boolean;
  onSort: (field: Column) => void;
  /** A row's History, Edit or Delete: the dialog to open. */
  onOpen: (editing: RowAction) => void;
}

export function BookTable(props: Props) {
  const { books, sort, loading, hidden, marked, live, onSort } = props;
  return (
    <div class="table-frame" style={{ "--rows": props.rows ?? PAGE_SIZE }} hidden={hidden}>
      <table aria-busy={loading} aria-describedby="page-status">
        <thead>
          <tr>
            {COLUMNS.map(({ field, label }) => (
              <SortHeading key={field} field={field} label={label} sort={sort} onSort={onSort} />
            ))}
            <th scope="col" class={props.writable ? "col-actions" : "col-actions readonly"}>
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(books ?? []).map((book) => (
            <BookRow
              key={book.id}
              book={book}
              marked={book.id === marked ? "added" : live.has(book.id) ? "live" : undefined}
              writable={props.writable}
              onOpen={props.onOpen}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Screen readers hear what a sort heading does: by text A to Z, by year oldest first. */
function sortWords(field: Column, direction: Direction) {
  const [up, down] = field === "year" ? ["oldest first", "newest first"] : ["A to Z", "Z to A"];
  if (direction === "ascending") return `, sorted ${up}; sort ${down}`;
  if (direction === "descending") return `, sorted ${down}; sort ${up}`;
  return `, sort ${up}`;
}

function SortHeading(props: {
  field: Column;
  label: string;
  sort: SortOrder;
  onSort: (field: Column) => void;
}) {
  const { field, sort } = props;
  const direction: Direction =
    sort === field ? "ascending" : sort === `-${field}` ? "descending" : undefined;
  return (
    <th scope="col" aria-sort={direction} class={`col-${field}`}>
      <button type="button" class="sort" onClick={() => props.onSort(field)}>
        {props.label}
        <span aria-hidden="true" class="arrow">
          {direction === "ascending" ? "▲" : direction === "descending" ? "▼" : ""}
        </span>
        <span class="visually-hidden">{sortWords(field, direction)}</span>
      </button>
    </th>
  );
}

function BookRow(
  props: Pick<Props, "writable" | "onOpen"> & {
    book: Book;
    /** Why the row is marked: the book just added here, or changed by another librarian. */
    marked: "added" | "live" | undefined;
  },
) {
  const { book } = props;
  return (
    <tr data-book={book.id} class={props.marked}>
      {/* Each text in a direction of its own: "מה זה? (כרך 2)" keeps its brackets' order. */}
      <td data-label="Title" class="col-title" title={book.title}>
        <bdi>{book.title}</bdi>
      </td>
      <td data-label="Author" class="col-author" title={book.author}>
        <bdi>{book.author}</bdi>
      </td>
      <td data-label="Year" class="col-year">
        {book.year}
      </td>
      <Actions {...props} />
    </tr>
  );
}

function Actions(props: Pick<Props, "writable" | "onOpen"> & { book: Book }) {
  const { book, onOpen } = props;
  return (
    <td class="col-actions">
      <button
        type="button"
        class="quiet"
        aria-label={`History of “${book.title}”`}
        onClick={() => onOpen({ mode: "history", book })}
      >
        History
      </button>
      {props.writable && (
        <>
          <button
            type="button"
            class="quiet"
            aria-label={`Edit “${book.title}”`}
            onClick={() => onOpen({ mode: "edit", book })}
          >
            Edit
          </button>
          <button
            type="button"
            class="quiet danger"
            aria-label={`Delete “${book.title}”`}
            onClick={() => onOpen({ mode: "delete", book })}
          >
            Delete
          </button>
        </>
      )}
    </td>
  );
}
