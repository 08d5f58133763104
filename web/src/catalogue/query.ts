// What a page of the listing asks for: its size, the columns it sorts by and the order first shown.
import type { SortOrder } from "book-catalogue";

/** Books a page: the table keeps room for this many rows, so nothing jumps while it loads. */
export const PAGE_SIZE = 20;

export const COLUMNS = [
  { field: "title", label: "Title" },
  { field: "author", label: "Author" },
  { field: "year", label: "Year" },
] as const;
export type Column = (typeof COLUMNS)[number]["field"];

export const SORTS: readonly SortOrder[] = COLUMNS.flatMap(
  ({ field }) => [field, `-${field}`] as const,
);
export const DEFAULT_SORT: SortOrder = "title";
