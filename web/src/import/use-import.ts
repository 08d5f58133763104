// The import's steps: choose a file, read it into a preview, import its books one at a time,
// and say what was done.

import { BookFileError } from "@book-catalogue/rules/import-rows.js";
import type { BookCatalogueClient } from "book-catalogue";
import { useRef, useState } from "preact/hooks";
import { describeFailure, endsSession } from "../session.js";
import { plural } from "../words.js";
import type { GivenYears, Plan } from "./plan.js";
import { type Preview, readPreview } from "./read-preview.js";

export type Stage =
  | { kind: "choose"; problem?: string }
  | { kind: "reading"; name: string }
  | { kind: "preview"; preview: Preview }
  | { kind: "importing"; done: number; total: number }
  | { kind: "finished"; summary: string };

/** `onFailure` hears a refused token (401), which ends the session. */
export function useImport(client: BookCatalogueClient, onFailure: (error: unknown) => void) {
  const [stage, setStage] = useState<Stage>({ kind: "choose" });
  const [keepDuplicates, setKeepDuplicates] = useState(false);
  const [years, setYears] = useState<GivenYears>({});
  const stopped = useRef(false);

  async function read(file: File) {
    setStage({ kind: "reading", name: file.name });
    setYears({});
    try {
      setStage({ kind: "preview", preview: await readPreview(client, file) });
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

  async function run(preview: Preview, { books, duplicates, withoutYear }: Plan) {
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
    const skipped = keepDuplicates ? 0 : duplicates;
    setStage({
      kind: "finished",
      summary:
        `Imported ${plural(imported, "book")} from “${preview.name}”` +
        `; ${plural(skipped, "duplicate")} skipped` +
        (withoutYear > 0 ? `; ${plural(withoutYear, "row")} without a year skipped` : "") +
        `; ${preview.refused.length + refused.length} refused.` +
        (refused.length > 0 ? ` The service refused ${refused.join(", ")}.` : ""),
    });
  }

  /** Stops an import under way after the book being sent. */
  const stop = () => {
    stopped.current = true;
  };
  return { stage, keepDuplicates, setKeepDuplicates, years, setYears, read, run, stop };
}
