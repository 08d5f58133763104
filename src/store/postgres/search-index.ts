import { indexWords, type SearchTerm } from "../../rules/search.js";

/**
 * The prefix lengths, in characters, whose prefixes are lexemes of their own, as SQLite's
 * FTS5 prefix indexes (migrations.ts, version 4): a search word of one of these lengths is
 * then one exact lexeme in the GIN index. A prefix query (`'word':*`) is a partial match,
 * which merges the lists of every lexeme it starts, many times slower at a million books
 * (docs/performance.md).
 */
const PREFIX_LENGTHS = [2, 3, 4, 6];

/**
 * A field's search words, as its tsvector holds them: one lexeme each, and each word's
 * prefixes of PREFIX_LENGTHS. A prefix is found only by a search for words that start with
 * it (every search word of two characters or more), so it finds nothing a prefix query
 * would not.
 */
export function lexemes(text: string): string {
  const kept = new Set<string>();
  for (const word of indexWords(text)) {
    kept.add(word);
    // A character is a code unit unless the word holds a pair: then cut by code points.
    const characters = SURROGATE.test(word) ? [...word] : word;
    for (const length of PREFIX_LENGTHS) {
      if (length < characters.length) kept.add(prefixOf(characters, length));
    }
  }
  return [...kept].join(" ");
}

const SURROGATE = /[\uD800-\uDFFF]/;
const prefixOf = (characters: string | string[], length: number) =>
  typeof characters === "string"
    ? characters.slice(0, length)
    : characters.slice(0, length).join("");

/**
 * The tsquery for the terms: each word a quoted lexeme, a prefix query where it may be one,
 * except where its length is one of PREFIX_LENGTHS: the words that start with it hold it.
 */
export const tsquery = (terms: readonly SearchTerm[]) =>
  terms
    .map(({ word, prefix }) =>
      prefix && !PREFIX_LENGTHS.includes([...word].length) ? `'${word}':*` : `'${word}'`,
    )
    .join(" & ");
