// The import's first step: drop a file, or choose one (the keyboard's way); then it is read.
import { useState } from "preact/hooks";

interface Props {
  /** The file being read, once chosen. */
  reading: string | undefined;
  /** Why the file chosen before cannot be imported. */
  problem: string | undefined;
  onFile: (file: File) => void;
  onCancel: () => void;
}

export function ChooseFile({ reading, problem, onFile, onCancel }: Props) {
  const [dragging, setDragging] = useState(false);
  return (
    <>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: dropping a file is the mouse's way; the keyboard's is the file chooser inside. */}
      <div
        class={`drop${dragging ? " dragging" : ""}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault();
          setDragging(false);
          const file = event.dataTransfer?.files[0];
          if (file) onFile(file);
        }}
      >
        <p>
          A CSV file whose first line names the columns <code>title</code>, <code>author</code> and{" "}
          <code>year</code>, a JSON list of books, or a Goodreads library export. Drop it here, or:
        </p>
        <label class="button">
          Choose a file
          <input
            type="file"
            accept=".csv,.json,text/csv,application/json"
            class="visually-hidden"
            onChange={(event) => {
              const file = event.currentTarget.files?.[0];
              if (file) onFile(file);
            }}
          />
        </label>
      </div>
      {reading !== undefined && (
        <p role="status">Reading “{reading}” and comparing it with the catalogue…</p>
      )}
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      <div class="actions">
        <button type="button" class="quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}
