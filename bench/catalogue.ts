// The catalogues the scenarios run on, written straight into a migrated database with their
// search words, as the service would have written them.
import { DatabaseSync } from "node:sqlite";
import { writeBackup } from "../src/backup/write.js";
import type { Book, NewBook } from "../src/rules/book.js";
import { sortKey } from "../src/rules/search.js";
import { BACKUP_PAGE_SIZE, type BackupStore } from "../src/store/backup.js";
import { indexedWords } from "../src/store/sqlite/search-index.js";
import { insertStoredBooks, pgConnect } from "../test/support/pg.js";

/** Books 1..count with plain numbered titles: what every scenario but search reads. */
export function* numberedBooks(count: number): Generator<NewBook> {
  for (let i = 1; i <= count; i++) {
    yield { title: `Title number ${i}`, author: `Author ${i % 1000}`, year: 1900 + (i % 120) };
  }
}

// The search scenarios' catalogue: made-up words with a skewed frequency, like a real
// catalogue's, so there are common words, rare ones and shared prefixes.

const SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vi", "do", "pa", "ri", "zu", "be"];
const VOCABULARY = 3_000;

/** Word `i` of the vocabulary: its base-13 digits as syllables, so neighbours share prefixes. */
function word(i: number): string {
  let text = "";
  for (let n = i + 13 ** 2; n > 0; n = Math.floor(n / 13)) text = SYLLABLES[n % 13] + text;
  return text;
}

/** A small deterministic generator (mulberry32), so every run seeds the same catalogue. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Book `i` (from 1): three words of skewed frequency, and every 1,000th a rare word of its own. */
export function* searchableBooks(count: number): Generator<NewBook> {
  const next = random(42);
  // u^2.5 favours small indexes: word 0 is in about one title in eight.
  const pick = () => word(Math.floor(VOCABULARY * next() ** 2.5));
  for (let i = 1; i <= count; i++) {
    const rare = i % 1_000 === 7 ? ` ${rareWord(Math.floor(i / 1_000))}` : "";
    const cjk = i % 10 === 3 ? ` ${unspacedTitle(i)}` : "";
    const title = `${capital(pick())} ${pick()} ${pick()}${rare}${cjk}`;
    const author = `${capital(word(500 + Math.floor(next() * 200)))} ${capital(word(1_000 + Math.floor(next() * 500)))}`;
    yield { title, author, year: 1800 + Math.floor(next() * 225) };
  }
}

// One title in ten also holds a run of Han characters written without spaces: six of 2,000,
// skewed as the words are, so a search inside such runs meets common characters and rare ones.
const HAN = 2_000;
const han = (i: number) => String.fromCodePoint(0x4e00 + i);

/** Book i's run of Han characters, the same every run (its own generator, seeded by i). */
function unspacedTitle(i: number): string {
  const next = random(i);
  return Array.from({ length: 6 }, () => han(Math.floor(HAN * next() ** 2.5))).join("");
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const rareWord = (j: number) => `zz${word(j)}`;

/** The queries of each search scenario; several of each kind, drawn at random per request. */
export const SEARCHES = {
  "a common word": [word(0), word(1), word(2)],
  "a rare word": Array.from({ length: 200 }, (_, j) => rareWord(j * 4)),
  "two words": [`${word(1)} ${word(3)}`, `${word(0)} ${word(2)}`, `${word(2)} ${word(5)}`],
  "a prefix": [word(40).slice(0, 4), word(90).slice(0, 4), word(7).slice(0, 5)],
  // Inside runs written without spaces: one common character, two or three from the middle of
  // some book's run, and a rare character.
  "Han inside a word": [
    han(0),
    han(3),
    unspacedTitle(13).slice(2, 4),
    unspacedTitle(1_003).slice(1, 4),
    unspacedTitle(500_003).slice(3, 5),
    han(1_900),
  ],
};

/** Writes the books, with ids 1, 2, …, and their search words into a migrated, empty database. */
export async function seedBooks(
  store: { kind: "sqlite"; path: string } | { kind: "postgres"; url: string },
  books: Iterable<NewBook>,
) {
  if (store.kind === "sqlite") {
    const db = new DatabaseSync(store.path);
    const insert = db.prepare(
      "INSERT INTO books (title, author, year, title_key, author_key) VALUES (?, ?, ?, ?, ?)",
    );
    const index = db.prepare("INSERT INTO books_search (rowid, words) VALUES (?, ?)");
    // As the store's writes: the word index's own page rowids can exceed 2^53.
    insert.setReadBigInts(true);
    index.setReadBigInts(true);
    db.exec("BEGIN");
    for (const book of books) {
      const { title, author, year } = book;
      const { lastInsertRowid } = insert.run(title, author, year, sortKey(title), sortKey(author));
      index.run(lastInsertRowid, indexedWords(book));
    }
    db.exec("COMMIT");
    db.close();
    return;
  }
  const db = await pgConnect(store.url);
  let batch: NewBook[] = [];
  for (const book of books) {
    batch.push(book);
    if (batch.length === 10_000) {
      await insertStoredBooks(db, batch);
      batch = [];
    }
  }
  if (batch.length > 0) await insertStoredBooks(db, batch);
  await db.script("VACUUM ANALYZE books, books_years");
  await db.end();
}

/** Writes `count` generated books (ids 1, 2, …, no accounts) to `file` as a backup. */
export async function writeGeneratedBackup(file: string, count: number, books: Iterable<NewBook>) {
  async function* pages(): AsyncGenerator<Book[]> {
    let page: Book[] = [];
    let id = 0;
    for (const book of books) {
      page.push({ id: ++id, ...book });
      if (page.length === BACKUP_PAGE_SIZE || id === count) {
        yield page;
        page = [];
      }
      if (id === count) return;
    }
  }
  const generated: BackupStore = {
    readSnapshot: (read) => read({ count, nextId: count + 1, pages, accounts: [] }),
    restore: () => Promise.reject(new Error("a generated catalogue is only read")),
    close: async () => {},
  };
  return writeBackup(generated, file);
}
