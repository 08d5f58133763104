// The contract's rules for a book (the one check the server and the command line share),
// checked in the page before anything is sent, in words a librarian reads next to the field.
import {
  type BookField,
  checkBook,
  checkText,
  checkYear,
  type FieldProblem,
  type NewBook,
  TEXT_LIMITS,
} from "@book-catalogue/rules/book.js";

export type Field = BookField;
/** What the form holds: every field as typed. */
export type Draft = Record<Field, string>;
export type Problems = Partial<Record<Field, string>>;

const LABELS: Record<Field, string> = { title: "Title", author: "Author", year: "Year" };

/** A year as typed: a number when it is written as one, else the text, or absent when empty. */
function typedYear(value: string): number | string | undefined {
  const year = value.trim();
  if (year === "") return undefined;
  return /^-?\d{1,5}$/.test(year) ? Number(year) : year;
}

function describe(field: Field, problem: FieldProblem): string {
  const label = LABELS[field];
  switch (problem.kind) {
    case "missing":
    case "not-text":
    case "empty":
      return `${label} is required.`;
    case "too-long":
      return `${label} can be at most ${problem.max} characters; it has ${problem.length}.`;
    case "forbidden-character":
      return `${label} holds a character the catalogue cannot store.`;
    case "not-a-year":
      return `${label} must be a whole number from ${problem.min} to ${problem.max}.`;
  }
}

/** The field's problem, or undefined when the contract accepts it. */
export function checkField(field: Field, value: string): string | undefined {
  const problem =
    field === "year" ? checkYear(typedYear(value)) : checkText(value, TEXT_LIMITS[field]);
  return problem === undefined ? undefined : describe(field, problem);
}

/** Every field's problem, and the book to send when there are none. */
export function checkDraft(draft: Draft): { problems: Problems; book?: NewBook } {
  const { problems, book } = checkBook({ ...draft, year: typedYear(draft.year) });
  const described: Problems = {};
  for (const [field, problem] of Object.entries(problems) as [Field, FieldProblem][]) {
    described[field] = describe(field, problem);
  }
  return book === undefined ? { problems: described } : { problems: described, book };
}
