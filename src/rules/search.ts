/**
 * What `q` means, and how titles and authors sort, in one place for both stores: the words of
 * `q` each match the start of a word of the title or the author (anywhere inside, in scripts
 * written without spaces), all of them, in any order, without regard to case or accents, in
 * every script. Both sides are folded here, so the stores index and compare exactly the same
 * words and sort keys.
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
 * A text as search and order compare it: decomposed (NFKD: ligatures and full-width forms
 * too), accents removed, case folded (upper then lower case, so ß and ss compare equal; and
 * the final sigma as any other, which lower-casing would bring back at the end of a word),
 * then composed again (NFC: Hangul syllables, kana with their voicing marks).
 */
export function folded(text: string): string {
  // Plain ASCII has no accents to remove nor letters that fold otherwise: the short way.
  if (PLAIN.test(text)) return text.toLowerCase();
  return text
    .normalize("NFKD")
    .replace(DIACRITICS, "")
    .toUpperCase()
    .toLowerCase()
    .replaceAll("ς", "σ")
    .normalize("NFC");
}

/**
 * What titles and authors sort by, the same on both stores: the folded text, compared by code
 * point (SQLite's BINARY, PostgreSQL's "C"). So Å sorts with A, é with e, ß as ss, each script
 * in Unicode order; ties go by id.
 */
export const sortKey = folded;

/** The words of a text as search compares them, in order: folded, split at anything that is
 * not a letter, a mark or a digit. */
export function foldedWords(text: string): string[] {
  return folded(text)
    .split(SEPARATORS)
    .filter((word) => word.length > 0);
}

/** The distinct words of a text as search compares them (see foldedWords). */
export function searchWords(text: string): string[] {
  return [...new Set(foldedWords(text))];
}

// Scripts written without spaces between words (Han, Hiragana, Katakana, Hangul, Thai, with
// the marks and signs they share): a term of them matches anywhere inside a word.
const UNSPACED = "\\p{scx=Han}\\p{scx=Hiragana}\\p{scx=Katakana}\\p{scx=Hangul}\\p{scx=Thai}";
const UNSPACED_RUN = new RegExp(`[${UNSPACED}]+`, "gu");
const ALL_UNSPACED = new RegExp(`^[${UNSPACED}]+$`, "u");

/**
 * A run of such characters is indexed as each of its suffixes cut to this many characters, so
 * a term of up to this many matches anywhere inside it by the index's prefix match; a longer
 * term is looked for as pieces of this length.
 */
export const INSIDE_MAX = 16;

/**
 * Words are compared by their first this many characters, in the index and in `q` alike: a
 * title of 500 characters can fold to a word of thousands (ligatures and squared words
 * decompose to several letters each), past what PostgreSQL keeps as one word (2047 bytes;
 * 500 characters are at most 2000).
 */
export const WORD_MAX = 500;

/** The word cut to WORD_MAX characters (never inside a character of two UTF-16 units). */
function cut(word: string): string {
  if (word.length <= WORD_MAX) return word;
  return [...word].slice(0, WORD_MAX).join("");
}

/**
 * The words the search index keeps for a text: its words (cut to WORD_MAX), and for each run
 * of characters of a script written without spaces, every suffix of the run (cut to
 * INSIDE_MAX). A word wholly of such a script is kept only as its suffixes: the first is its
 * start.
 */
export function indexWords(text: string): string[] {
  const kept = new Set<string>();
  for (const word of searchWords(text)) {
    if (!ALL_UNSPACED.test(word)) kept.add(cut(word));
    for (const [run] of word.matchAll(UNSPACED_RUN)) {
      const characters = [...run];
      for (let i = 0; i < characters.length; i++) {
        kept.add(characters.slice(i, i + INSIDE_MAX).join(""));
      }
    }
  }
  return [...kept];
}

/**
 * The distinct characters of a text's runs written without spaces, folded: a store may index
 * each as a word of its own, so that a term of one such character is one word's list to read,
 * not a prefix of every indexed suffix that starts with it.
 */
export function unspacedCharacters(text: string): string[] {
  if (PLAIN.test(text)) return [];
  const kept = new Set<string>();
  for (const word of searchWords(text)) {
    for (const [run] of word.matchAll(UNSPACED_RUN)) {
      for (const character of run) kept.add(character);
    }
  }
  return [...kept];
}

/** A word of `q` this long or longer matches the start of a word; a shorter one, a whole word. */
export const MIN_PREFIX = 2;

/** A search word and whether it matches as a prefix. */
export interface SearchTerm {
  word: string;
  prefix: boolean;
}

/**
 * The terms of `q`; none when it holds no letter or digit. A word is cut to WORD_MAX
 * characters, as the index cuts it, so a longer one finds the words that start as it does up
 * to there (a prefix, as it was). A word wholly of a script written
 * without spaces is a prefix of some suffix (that is, found anywhere inside): as one term, or
 * when longer than INSIDE_MAX as pieces of that length, the last one ending with the word.
 */
export function searchTerms(q: string): SearchTerm[] {
  const terms = searchWords(q).flatMap((word): SearchTerm[] => {
    const characters = [...word];
    if (!ALL_UNSPACED.test(word)) {
      return [{ word: cut(word), prefix: characters.length >= MIN_PREFIX }];
    }
    const starts = [];
    for (let i = 0; i + INSIDE_MAX < characters.length; i += INSIDE_MAX) starts.push(i);
    starts.push(Math.max(0, characters.length - INSIDE_MAX));
    return starts.map((i) => ({
      word: characters.slice(i, i + INSIDE_MAX).join(""),
      prefix: true,
    }));
  });
  return [...new Map(terms.map((term) => [`${term.prefix} ${term.word}`, term])).values()];
}

/**
 * How a word of `q` matches: anywhere inside a title or author (a word wholly of a script
 * written without spaces), as a whole word (shorter than MIN_PREFIX), or at the start of a word.
 */
export type WordMatch = "inside" | "whole" | "start";

/**
 * The words of `q` as typed (no separators), each with how it matches, as searchTerms reads
 * it: what a person is told about a search that found nothing.
 */
export function howWordsMatch(q: string): { word: string; match: WordMatch }[] {
  return q
    .split(SEPARATORS)
    .map((word) => ({ word, pieces: foldedWords(word) }))
    .filter(({ pieces }) => pieces.length > 0)
    .map(({ word, pieces }) => ({ word, match: matchOf(pieces) }));
}

/** How the folded pieces of one typed word match. */
function matchOf(pieces: string[]): WordMatch {
  if (pieces.every((piece) => ALL_UNSPACED.test(piece))) return "inside";
  if (pieces.every((piece) => [...piece].length < MIN_PREFIX)) return "whole";
  return "start";
}

/** Whether a book's title and author hold every term: what the indexes answer, in code. */
export function matchesTerms(terms: readonly SearchTerm[], title: string, author: string) {
  const words = [...indexWords(title), ...indexWords(author)];
  return terms.every(({ word, prefix }) =>
    words.some((candidate) => (prefix ? candidate.startsWith(word) : candidate === word)),
  );
}
