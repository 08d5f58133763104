// Import a file of books, with a preview first; export the catalogue or a search. Both go
// page by page through the API, so a large catalogue never freezes the page.
import { useEffect, useRef, useState } from "preact/hooks";
import { BookFileError, sameBookKey } from "../../src/books/import-rows.js";
import type { BookCatalogueClient, NewBook } from "../../src/client.js";
import { Modal } from "./modal.js";
import type { ReadAnswer, ReadRow } from "./read-file.worker.js";
import { describeFailure, endsSession } from "./session.js";

/** The most refused rows the preview lists; the count says how many more. */
const LISTED_REFUSALS = 100;
/** Books a request when exporting: the API's largest page. */
const EXPORT_PAGE = 1000;

interface Preview {
  name: string;
  rows: number;
  /** The books of the file in its order, each marked when the catalogue has it already. */
  books: { book: NewBook; duplicate: boolean }[];
  duplicates: number;
  refused: { line: number; title?: string; reason: string }[];
}

type Stage =
  | { kind: "choose"; problem?: string }
  | { kind: "reading"; name: string }
  | { kind: "preview"; preview: Preview }
  | { kind: "importing"; done: number; total: number }
  | { kind: "finished"; summary: string };

interface ImportProps {
  client: BookCatalogueClient;
  onCancel: () => void;
  /** After an import: what it did, for the page to announce. */
  onDone: (summary: string) => void;
  onFailure: (error: unknown) => void;
}

export function ImportDialog({ client, onCancel, onDone, onFailure }: ImportProps) {
  const [stage, setStage] = useState<Stage>({ kind: "choose" });
  const [keepDuplicates, setKeepDuplicates] = useState(false);
  const [dragging, setDragging] = useState(false);
  const stopped = useRef(false);
  // Each step replaces the controls of the one before: the keyboard's focus moves to the
  // step's own (marked data-focus), not to the page behind.
  useEffect(() => {
    document.querySelector<HTMLElement>("dialog [data-focus]")?.focus();
  }, [stage.kind]);

  async function read(file: File) {
    setStage({ kind: "reading", name: file.name });
    try {
      const rows = await readRows(await file.text());
      // The catalogue's books before the import: a row equal to one of them is a duplicate.
      const existing = new Set<string>();
      for await (const book of client.books({ limit: EXPORT_PAGE }))
        existing.add(sameBookKey(book));
      const preview: Preview = {
        name: file.name,
        rows: rows.length,
        books: [],
        duplicates: 0,
        refused: [],
      };
      for (const row of rows) {
        if (row.problems) {
          const reason = row.problems.join("; ");
          preview.refused.push({
            line: row.line,
            reason,
            ...(row.title ? { title: row.title } : {}),
          });
        } else {
          const duplicate = existing.has(row.key ?? "");
          preview.books.push({ book: row.book, duplicate });
          if (duplicate) preview.duplicates += 1;
        }
      }
      setStage({ kind: "preview", preview });
    } catch (error) {
      if (error instanceof BookFileError) {
        setStage({ kind: "choose", problem: `“${file.name}” ${error.message}.` });
      } else if (endsSession(error)) {
        onFailure(error);
      } else {
        setStage({ kind: "choose", problem: describeFailure(error) });
      }
    }
  }

  async function run(preview: Preview) {
    const books = preview.books
      .filter(({ duplicate }) => keepDuplicates || !duplicate)
      .map(({ book }) => book);
    let imported = 0;
    const refused: string[] = [];
    setStage({ kind: "importing", done: 0, total: books.length });
    // One at a time, so the catalogue keeps the file's order.
    for (const book of books) {
      if (stopped.current) break;
      try {
        await client.createBook(book);
        imported += 1;
      } catch (error) {
        if (endsSession(error)) {
          onFailure(error);
          return;
        }
        refused.push(`“${book.title}”: ${describeFailure(error)}`);
      }
      setStage({ kind: "importing", done: imported + refused.length, total: books.length });
    }
    const skipped = keepDuplicates ? 0 : preview.duplicates;
    setStage({
      kind: "finished",
      summary:
        `Imported ${plural(imported, "book")} from “${preview.name}”` +
        `; ${plural(skipped, "duplicate")} skipped; ${preview.refused.length + refused.length} refused.` +
        (refused.length > 0 ? ` The service refused ${refused.join(", ")}.` : ""),
    });
  }

  const title = "Import a file";
  if (stage.kind === "choose" || stage.kind === "reading") {
    return (
      <Modal title={title} onCancel={onCancel}>
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
            if (file) void read(file);
          }}
        >
          <p>
            A CSV file whose first line names the columns <code>title</code>, <code>author</code>{" "}
            and <code>year</code>, a JSON list of books, or a Goodreads library export. Drop it
            here, or:
          </p>
          <label class="button">
            Choose a file
            <input
              type="file"
              accept=".csv,.json,text/csv,application/json"
              class="visually-hidden"
              onChange={(event) => {
                const file = event.currentTarget.files?.[0];
                if (file) void read(file);
              }}
            />
          </label>
        </div>
        {stage.kind === "reading" && (
          <p role="status">Reading “{stage.name}” and comparing it with the catalogue…</p>
        )}
        {stage.kind === "choose" && stage.problem && (
          <p class="error" role="alert">
            {stage.problem}
          </p>
        )}
        <div class="actions">
          <button type="button" class="quiet" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </Modal>
    );
  }
  if (stage.kind === "preview") {
    const { preview } = stage;
    const fresh = preview.books.length - preview.duplicates;
    const count = keepDuplicates ? preview.books.length : fresh;
    return (
      <Modal title={title} onCancel={onCancel}>
        <p>
          “{preview.name}” holds {plural(preview.rows, "row")}:
        </p>
        <ul class="preview-counts">
          <li>
            <strong>{fresh.toLocaleString("en")}</strong> new
          </li>
          <li>
            <strong>{preview.duplicates.toLocaleString("en")}</strong> already in the catalogue
            (same title, author and year)
          </li>
          <li>
            <strong>{preview.refused.length.toLocaleString("en")}</strong> that are not books
          </li>
        </ul>
        {preview.refused.length > 0 && (
          <div class="refused">
            <table>
              <caption class="visually-hidden">Rows that will not be imported</caption>
              <thead>
                <tr>
                  <th scope="col" class="col-line">
                    Line
                  </th>
                  <th scope="col">Title</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {preview.refused.slice(0, LISTED_REFUSALS).map((row) => (
                  <tr key={row.line}>
                    <td class="col-line">{row.line}</td>
                    <td title={row.title}>{row.title ?? "—"}</td>
                    <td title={row.reason}>{row.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {preview.refused.length > LISTED_REFUSALS && (
              <p>And {(preview.refused.length - LISTED_REFUSALS).toLocaleString("en")} more.</p>
            )}
          </div>
        )}
        {preview.duplicates > 0 && (
          <label class="check">
            <input
              type="checkbox"
              checked={keepDuplicates}
              onChange={(event) => setKeepDuplicates(event.currentTarget.checked)}
            />
            Import the books already in the catalogue too
          </label>
        )}
        <div class="actions">
          <button type="button" class="quiet" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" data-focus disabled={count === 0} onClick={() => void run(preview)}>
            Import {plural(count, "book")}
          </button>
        </div>
      </Modal>
    );
  }
  if (stage.kind === "importing") {
    return (
      <Modal
        title={title}
        onCancel={() => {
          stopped.current = true;
        }}
      >
        <label class="progress" tabIndex={-1} data-focus>
          Importing: {stage.done.toLocaleString("en")} of {stage.total.toLocaleString("en")}
          <progress value={stage.done} max={stage.total} />
        </label>
      </Modal>
    );
  }
  return (
    <Modal title={title} onCancel={() => onDone(stage.summary)}>
      <p role="status">{stage.summary}</p>
      <div class="actions">
        <button type="button" data-focus onClick={() => onDone(stage.summary)}>
          Close
        </button>
      </div>
    </Modal>
  );
}

/** The file's rows, read and checked by a worker (see read-file.worker.ts). */
function readRows(text: string): Promise<ReadRow[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./read-file.worker.ts", import.meta.url), {
      type: "module",
    });
    worker.onmessage = ({ data }: MessageEvent<ReadAnswer>) => {
      worker.terminate();
      if ("rows" in data) resolve(data.rows);
      else reject(data.notBooks ? new BookFileError(data.problem) : new Error(data.problem));
    };
    worker.onerror = (event) => {
      worker.terminate();
      reject(new Error(event.message));
    };
    worker.postMessage(text);
  });
}

const plural = (n: number, noun: string) =>
  `${n.toLocaleString("en")} ${noun}${n === 1 ? "" : "s"}`;

const csvField = (value: string | number) => {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/**
 * The whole catalogue, or the books a search finds, as a file the browser saves: CSV with
 * the header id,title,author,year, or a JSON list, as the command line's export writes them.
 * Read a page of 1,000 at a time; `onProgress` hears how many so far.
 */
export async function exportBooks(
  client: BookCatalogueClient,
  options: { q?: string; format: "csv" | "json"; onProgress: (count: number) => void },
): Promise<{ count: number; name: string }> {
  const parts: string[] = [options.format === "csv" ? "id,title,author,year\n" : "["];
  let count = 0;
  const query = { limit: EXPORT_PAGE, sort: "id" as const, ...(options.q ? { q: options.q } : {}) };
  for await (const book of client.books(query)) {
    parts.push(
      options.format === "csv"
        ? `${[book.id, book.title, book.author, book.year].map(csvField).join(",")}\n`
        : `${count === 0 ? "\n" : ",\n"}${JSON.stringify(book)}`,
    );
    count += 1;
    if (count % EXPORT_PAGE === 0) options.onProgress(count);
  }
  if (options.format === "json") parts.push(count === 0 ? "]\n" : "\n]\n");
  const name = `catalogue${options.q ? "-search" : ""}.${options.format}`;
  const link = document.createElement("a");
  link.href = URL.createObjectURL(
    new Blob(parts, { type: options.format === "csv" ? "text/csv" : "application/json" }),
  );
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
  options.onProgress(count);
  return { count, name };
}

interface ExportProps {
  client: BookCatalogueClient;
  /** The search shown: its books are exported, else the whole catalogue. */
  q: string | undefined;
  disabled: boolean;
  onDone: (message: string) => void;
  onFailure: (error: unknown) => void;
}

export function ExportButtons({ client, q, disabled, onDone, onFailure }: ExportProps) {
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
