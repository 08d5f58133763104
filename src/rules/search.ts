/**
 * What `q` means, in one place for both stores: the words of `q` each match the start of a
 * word of the title or the author, all of them, in any order, without regard to case or
 * accents, in every script. Both sides are folded here, so the stores index and compare
 * exactly the same words.
 */

// Accents and other diacritics: the combining marks that follow a letter once it is
// decomposed (Latin, Greek, Cyrillic...). Marks that are letters' own parts in other scripts
// (Devanagari vowel signs, kana voicing) are kept.
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
// Printable ASCII.
const PLAIN = /^[\x20-\x7e]*$/;
// Anything but a letter, a mark or a digit separates words.
const SEPARATORS = /[^\p{L}\p{M}\p{N}]+/u;

/**
 * The words of a text as search compares them, in order: decomposed (NFKD: ligatures and
 * full-width forms too), accents removed, case folded (upper then lower case, so ß and ss
 * compare equal; and the final sigma as any other, which lower-casing would bring back at the
 * end of a word), split at anything that is not a letter or a digit.
 */
export function foldedWords(text: string): string[] {
  // Plain ASCII has no accents to remove nor letters that fold otherwise: the short way.
  const folded = PLAIN.test(text)
    ? text.toLowerCase()
    : text
        .normalize("NFKD")
        .replace(DIACRITICS, "")
        .toUpperCase()
        .toLowerCase()
        .replaceAll("ς", "σ");
  return folded.split(SEPARATORS).filter((word) => word.length > 0);
}

/** The distinct words of a text as search compares them (see foldedWords). */
export function searchWords(text: string): string[] {
  return [...new Set(foldedWords(text))];
}

/** A word of `q` this long or longer matches the start of a word; a shorter one, a whole word. */
export const MIN_PREFIX = 2;

/** A search word and whether it matches as a prefix. */
export interface SearchTerm {
  word: string;
  prefix: boolean;
}

/** The terms of `q`; none when it holds no letter or digit (then it selects every book). */
export function searchTerms(q: string): SearchTerm[] {
  return searchWords(q).map((word) => ({ word, prefix: [...word].length >= MIN_PREFIX }));
}

/** Whether a book's title and author hold every term: what the indexes answer, in code. */
export function matchesTerms(terms: readonly SearchTerm[], title: string, author: string) {
  const words = [...searchWords(title), ...searchWords(author)];
  return terms.every(({ word, prefix }) =>
    words.some((candidate) => (prefix ? candidate.startsWith(word) : candidate === word)),
  );
}
