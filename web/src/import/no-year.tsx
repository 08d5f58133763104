// The rows of the preview that have no year: a field each, and one year for all of them at
// once. A row whose field is left empty is skipped.
import { useState } from "preact/hooks";
import { plural } from "../words.js";
import { type GivenYears, LISTED_ROWS, type Plan } from "./plan.js";
import type { NoYearRow } from "./read-preview.js";

interface Props {
  rows: NoYearRow[];
  years: GivenYears;
  plan: Plan;
  onYears: (years: GivenYears) => void;
}

export function NoYearRows({ rows, years, plan, onYears }: Props) {
  const [forAll, setForAll] = useState("");
  const all = rows.length === 1 ? "it" : `all ${rows.length}`;
  return (
    <section class="no-year" aria-label="Rows without a year">
      <p>
        Give {rows.length === 1 ? "the row" : "each row"} without a year one, or leave the field
        empty to skip it: {plan.given.toLocaleString("en")} given,{" "}
        {plan.withoutYear.toLocaleString("en")} to be skipped.
      </p>
      <div class="year-for-all">
        <label class="year-label">
          Year for {all}
          <input
            class="year-field"
            inputMode="numeric"
            value={forAll}
            onInput={(event) => setForAll(event.currentTarget.value)}
          />
        </label>
        <button
          type="button"
          class="secondary"
          disabled={forAll.trim() === ""}
          onClick={() => onYears(Object.fromEntries(rows.map((row) => [row.line, forAll])))}
        >
          Give {all} this year
        </button>
        <button type="button" class="quiet" onClick={() => onYears({})}>
          Skip {all}
        </button>
      </div>
      <div class="no-year-rows">
        <table>
          <caption class="visually-hidden">Rows without a year</caption>
          <thead>
            <tr>
              <th scope="col" class="col-line">
                Line
              </th>
              <th scope="col">Title</th>
              <th scope="col">Author</th>
              <th scope="col" class="col-given-year">
                Year
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.slice(0, LISTED_ROWS).map((row) => (
              <YearRow
                key={row.line}
                row={row}
                year={years[row.line] ?? ""}
                wrong={plan.wrongYears.get(row.line)}
                onYear={(year) => onYears({ ...years, [row.line]: year })}
              />
            ))}
          </tbody>
        </table>
        {rows.length > LISTED_ROWS && (
          <p>
            And {plural(rows.length - LISTED_ROWS, "more row")}: the year for all gives them one
            too.
          </p>
        )}
      </div>
    </section>
  );
}

interface RowProps {
  row: NoYearRow;
  year: string;
  wrong: string | undefined;
  onYear: (year: string) => void;
}

function YearRow({ row, year, wrong, onYear }: RowProps) {
  const problem = `year-problem-${row.line}`;
  return (
    <tr>
      <td class="col-line">{row.line}</td>
      <td title={row.title}>{row.title}</td>
      <td title={row.author}>{row.author}</td>
      <td class="col-given-year">
        <input
          class="year-field"
          inputMode="numeric"
          aria-label={`Year of line ${row.line}, “${row.title}”`}
          placeholder="skipped"
          value={year}
          aria-invalid={wrong !== undefined}
          {...(wrong === undefined ? {} : { "aria-describedby": problem })}
          onInput={(event) => onYear(event.currentTarget.value)}
        />
        {wrong !== undefined && (
          <span id={problem} class="problem">
            {wrong}
          </span>
        )}
      </td>
    </tr>
  );
}
