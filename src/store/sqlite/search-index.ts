import { indexWords, type SearchTerm } from "../../rules/search.js";

/** The words the search index keeps for a book. */
export const indexedWords = (book: { title: string; author: string }) =>
  [...new Set([...indexWords(book.title), ...indexWords(book.author)])].join(" ");

/** The FTS5 query for the terms: each a quoted word, a prefix query where it may be one. */
export const matchExpression = (terms: readonly SearchTerm[]) =>
  terms.map(({ word, prefix }) => `"${word}"${prefix ? "*" : ""}`).join(" ");
