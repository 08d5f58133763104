// The two ways books come in, wherever the page offers them: above the table, and in the
// empty catalogue's notice; neither for a reader.
import type { ComponentChildren } from "preact";

interface Props {
  /** False for a role that may not add books: only the buttons after these are shown. */
  writable: boolean;
  onAdd: () => void;
  onImport: () => void;
  /** More buttons after these two. */
  children?: ComponentChildren;
}

export function AddAndImport({ writable, onAdd, onImport, children }: Props) {
  return (
    <div class="tool-buttons">
      {writable && (
        <>
          <button type="button" onClick={onAdd}>
            Add a book
          </button>
          <button type="button" class="secondary" onClick={onImport}>
            Import a file
          </button>
        </>
      )}
      {children}
    </div>
  );
}
