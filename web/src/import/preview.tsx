// The import's second step: what the file holds (new books, duplicates, rows without a year
// to be given one, rows that cannot be imported, listed with their line and why), and the
// button that imports.
import { useMemo } from "preact/hooks";
import { plural } from "../words.js";
import { NoYearRows } from "./no-year.js";
import { type GivenYears, LISTED_ROWS, type Plan, planImport } from "./plan.js";
import type { Preview } from "./read-preview.js";

interface Props {
  preview: Preview;
  keepDuplicates: boolean;
  onKeepDuplicates: (keep: boolean) => void;
  years: GivenYears;
  onYears: (years: GivenYears) => void;
  onCancel: () => void;
  onImport: (plan: Plan) => void;
}

/** "row has", "rows have". */
const rowsHave = (n: number) => (n === 1 ? "row has" : "rows have");

export function PreviewStep(props: Props) {
  const { preview, keepDuplicates, onKeepDuplicates, years, onYears } = props;
  const plan = useMemo(
    () => planImport(preview, years, keepDuplicates),
    [preview, years, keepDuplicates],
  );
  const count = plan.books.length;
  const noYear = preview.noYear.length;
  const refused = preview.refused.length;
  return (
    <>
      <p>
        “{preview.name}” holds {plural(preview.rows, "row")}:
      </p>
      <ul class="preview-counts">
        <li>
          <strong>{plan.fresh.toLocaleString("en")}</strong> new
        </li>
        <li>
          <strong>{plan.duplicates.toLocaleString("en")}</strong> already in the catalogue or the
          file (same title, author and year)
        </li>
        {noYear > 0 && (
          <li>
            <strong>{noYear.toLocaleString("en")}</strong> {rowsHave(noYear)} no year
          </li>
        )}
        {refused > 0 && (
          <li>
            <strong>{refused.toLocaleString("en")}</strong> {refused === 1 ? "row" : "rows"} cannot
            be imported as {refused === 1 ? "it is" : "they are"}
          </li>
        )}
      </ul>
      {noYear > 0 && (
        <NoYearRows rows={preview.noYear} years={years} plan={plan} onYears={onYears} />
      )}
      {refused > 0 && <RefusedRows refused={preview.refused} />}
      {plan.duplicates > 0 && (
        <label class="check">
          <input
            type="checkbox"
            checked={keepDuplicates}
            onChange={(event) => onKeepDuplicates(event.currentTarget.checked)}
          />
          Import the duplicates too
        </label>
      )}
      <div class="actions">
        <button type="button" class="quiet" onClick={props.onCancel}>
          Cancel
        </button>
        <button
          type="button"
          data-focus
          disabled={count === 0 || plan.wrongYears.size > 0}
          onClick={() => props.onImport(plan)}
        >
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
        <caption class="visually-hidden">Rows that cannot be imported, and why</caption>
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
          {refused.slice(0, LISTED_ROWS).map((row) => (
            <tr key={row.line}>
              <td class="col-line">{row.line}</td>
              <td title={row.title}>{row.title ?? "—"}</td>
              <td title={row.reason}>{row.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {refused.length > LISTED_ROWS && (
        <p>And {(refused.length - LISTED_ROWS).toLocaleString("en")} more.</p>
      )}
    </div>
  );
}
