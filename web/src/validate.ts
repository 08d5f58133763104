// The contract's rules for a book, checked in the page before anything is sent, in words a
// librarian reads next to the field. The rules come from the service's own schema.
import { type NewBook, newBookSchema } from "@book-catalogue/rules/book.js";

export type Field = "title" | "author" | "year";
/** What the form holds: every field as typed. */
export type Draft = Record<Field, string>;
export type Problems = Partial<Record<Field, string>>;

const LABELS: Record<Field, string> = { title: "Title", author: "Author", year: "Year" };

function checkText(field: "title" | "author", value: string): string | undefined {
  const { maxLength, pattern } = newBookSchema.properties[field];
  // Lengths count characters as the service does (code points), not UTF-16 units.
  const length = [...value].length;
  if (value.trim() === "") return `${LABELS[field]} is required.`;
  if (length > maxLength) {
    return `${LABELS[field]} can be at most ${maxLength} characters; it has ${length}.`;
  }
  if (!new RegExp(pattern, "u").test(value)) {
    return `${LABELS[field]} holds a character the catalogue cannot store.`;
  }
  return undefined;
}

function checkYear(value: string): string | undefined {
  const { minimum, maximum } = newBookSchema.properties.year;
  const year = value.trim();
  if (year === "") return "Year is required.";
  if (!/^-?\d{1,5}$/.test(year) || Number(year) < minimum || Number(year) > maximum) {
    return `Year must be a whole number from ${minimum} to ${maximum}.`;
  }
  return undefined;
}

/** The field's problem, or undefined when the contract accepts it. */
export function checkField(field: Field, value: string): string | undefined {
  return field === "year" ? checkYear(value) : checkText(field, value);
}

/** Every field's problem, and the book to send when there are none. */
export function checkDraft(draft: Draft): { problems: Problems; book?: NewBook } {
  const problems: Problems = {};
  for (const field of ["title", "author", "year"] as const) {
    const problem = checkField(field, draft[field]);
    if (problem !== undefined) problems[field] = problem;
  }
  if (Object.keys(problems).length > 0) return { problems };
  return {
    problems,
    book: { title: draft.title, author: draft.author, year: Number(draft.year.trim()) },
  };
}
