import { indexWords, type SearchTerm } from "../../rules/search.js";

/** A field's search words, as its tsvector holds them: one lexeme each. */
export const lexemes = (text: string) => indexWords(text).join(" ");

/** The tsquery for the terms: each word a quoted lexeme, a prefix query where it may be one. */
export const tsquery = (terms: readonly SearchTerm[]) =>
  terms.map(({ word, prefix }) => `'${word}'${prefix ? ":*" : ""}`).join(" & ");
