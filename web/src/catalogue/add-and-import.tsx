// The two ways books come in, wherever the page offers them: above the table, and in the
// empty catalogue's notice.
import type { ComponentChildren } from "preact";

interface Props {
  onAdd: () => void;
  onImport: () => void;
  /** More buttons after these two. */
  children?: ComponentChildren;
}

export function AddAndImport({ onAdd, onImport, children }: Props) {
  return (
    <div class="tool-buttons">
      <button type="button" onClick={onAdd}>
        Add a book
      </button>
      <button type="button" class="secondary" onClick={onImport}>
        Import a file
      </button>
      {children}
    </div>
  );
}
