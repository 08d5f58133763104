import { indexWords, type SearchTerm, unspacedCharacters } from "../../rules/search.js";

/**
 * The words the search index keeps for a book: its index words (rules/search.ts), and from
 * version 15 each character of its runs written without spaces as a word of its own. FTS5
 * keeps no index of one-character prefixes, so a term of one such character would otherwise
 * merge the lists of every indexed suffix it starts (docs/performance.md).
 */
export const indexedWords = ({ title, author }: { title: string; author: string }) =>
  [
    ...new Set([
      ...indexWords(title),
      ...indexWords(author),
      ...unspacedCharacters(title),
      ...unspacedCharacters(author),
    ]),
  ].join(" ");

/**
 * The FTS5 query for the terms: each a quoted word, a prefix query where it may be one. A
 * prefix term of one character is one of a run written without spaces (other words match as
 * prefixes from two characters on), and is found by its own word.
 */
export const matchExpression = (terms: readonly SearchTerm[]) =>
  terms
    .map(({ word, prefix }) => `"${word}"${prefix && [...word].length > 1 ? "*" : ""}`)
    .join(" ");
