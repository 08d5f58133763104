// Export CSV and Export JSON in the toolbar, with how far an export has come.

import type { BookCatalogueClient } from "book-catalogue";
import { useState } from "preact/hooks";
import { plural } from "../words.js";
import { exportBooks } from "./export-books.js";

interface Props {
  client: BookCatalogueClient;
  /** The search shown: its books are exported, else the whole catalogue. */
  q: string | undefined;
  disabled: boolean;
  onDone: (message: string) => void;
  onFailure: (error: unknown) => void;
}

export function ExportButtons({ client, q, disabled, onDone, onFailure }: Props) {
  const [progress, setProgress] = useState<string>();
  const run = async (format: "csv" | "json") => {
    setProgress("Exporting…");
    try {
      const { count, name } = await exportBooks(client, {
        format,
        ...(q ? { q } : {}),
        onProgress: (n) => setProgress(`Exporting: ${n.toLocaleString("en")} books`),
      });
      onDone(`Exported ${plural(count, "book")} to ${name}.`);
    } catch (error) {
      onFailure(error);
    } finally {
      setProgress(undefined);
    }
  };
  const what = q ? `the books matching “${q}”` : "the whole catalogue";
  return (
    <fieldset class="export">
      <legend class="visually-hidden">Export {what}</legend>
      {(["csv", "json"] as const).map((format) => (
        <button
          key={format}
          type="button"
          class="secondary"
          title={`Save ${what} as ${format.toUpperCase()}`}
          disabled={disabled || progress !== undefined}
          onClick={() => void run(format)}
        >
          Export {format.toUpperCase()}
        </button>
      ))}
      {progress && (
        <span class="export-progress" role="status">
          {progress}
        </span>
      )}
    </fieldset>
  );
}
