// Above the table: how many books, the search, and what to do with books (add, import, export).
import type { BookCatalogueClient } from "book-catalogue";
import { useLayoutEffect, useRef } from "preact/hooks";
import { ExportButtons } from "../export/export-buttons.js";
import { matching, plural } from "../words.js";
import { AddAndImport } from "./add-and-import.js";
import { SearchBar } from "./search-bar.js";
import type { WalkState } from "./use-walk.js";

interface Props {
  client: BookCatalogueClient;
  walk: WalkState;
  /** How many books match, once counted. */
  total: number | undefined;
  /** Whether Add a book and Import a file are offered. */
  writable: boolean;
  onAdd: () => void;
  onImport: () => void;
  /** After an export: what it did, for the page to announce. */
  onExported: (message: string) => void;
  onFailure: (error: unknown) => void;
}

/** "1,234 books", or "3 books match “calvino”". */
function countText(total: number | undefined, q: string | undefined): string {
  if (total === undefined) return "";
  return q ? `${matching(total)} “${q}”` : plural(total, "book");
}

export function Toolbar(props: Props) {
  const { client, walk, total, writable, onAdd, onImport, onExported, onFailure } = props;
  const { q } = walk.query;
  const count = countText(total, q);
  // Signed in (or back from Accounts), the keyboard starts at the catalogue, not the page's top.
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => heading.current?.focus({ preventScroll: true }), []);
  return (
    <div class="tools">
      <div>
        <h2 id="catalogue-title" tabIndex={-1} ref={heading}>
          Books
        </h2>
        {/* A long search is cut short here (whole on hover): the search box keeps its width. */}
        <p id="book-count" class="count" title={count}>
          {count}
        </p>
      </div>
      <SearchBar
        value={walk.search}
        onInput={walk.setSearch}
        onSearch={(typed) => walk.restart({ q: typed })}
      />
      <AddAndImport writable={writable} onAdd={onAdd} onImport={onImport}>
        <ExportButtons
          client={client}
          q={q}
          disabled={total === 0}
          onDone={onExported}
          onFailure={onFailure}
        />
      </AddAndImport>
    </div>
  );
}
