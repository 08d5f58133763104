// The import's second step: what the file holds (new books, duplicates, rows that are not
// books, listed with their line and why), and the button that imports.
import { plural } from "../words.js";
import type { Preview } from "./read-preview.js";

/** The most refused rows the preview lists; the count says how many more. */
const LISTED_REFUSALS = 100;

interface Props {
  preview: Preview;
  keepDuplicates: boolean;
  onKeepDuplicates: (keep: boolean) => void;
  onCancel: () => void;
  onImport: () => void;
}

export function PreviewStep({
  preview,
  keepDuplicates,
  onKeepDuplicates,
  onCancel,
  onImport,
}: Props) {
  const fresh = preview.books.length - preview.duplicates;
  const count = keepDuplicates ? preview.books.length : fresh;
  return (
    <>
      <p>
        “{preview.name}” holds {plural(preview.rows, "row")}:
      </p>
      <ul class="preview-counts">
        <li>
          <strong>{fresh.toLocaleString("en")}</strong> new
        </li>
        <li>
          <strong>{preview.duplicates.toLocaleString("en")}</strong> already in the catalogue (same
          title, author and year)
        </li>
        <li>
          <strong>{preview.refused.length.toLocaleString("en")}</strong> that are not books
        </li>
      </ul>
      {preview.refused.length > 0 && <RefusedRows refused={preview.refused} />}
      {preview.duplicates > 0 && (
        <label class="check">
          <input
            type="checkbox"
            checked={keepDuplicates}
            onChange={(event) => onKeepDuplicates(event.currentTarget.checked)}
          />
          Import the books already in the catalogue too
        </label>
      )}
      <div class="actions">
        <button type="button" class="quiet" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" data-focus disabled={count === 0} onClick={onImport}>
          Import {plural(count, "book")}
        </button>
      </div>
    </>
  );
}

function RefusedRows({ refused }: { refused: Preview["refused"] }) {
  return (
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
          {refused.slice(0, LISTED_REFUSALS).map((row) => (
            <tr key={row.line}>
              <td class="col-line">{row.line}</td>
              <td title={row.title}>{row.title ?? "—"}</td>
              <td title={row.reason}>{row.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {refused.length > LISTED_REFUSALS && (
        <p>And {(refused.length - LISTED_REFUSALS).toLocaleString("en")} more.</p>
      )}
    </div>
  );
}
