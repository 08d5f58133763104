// What a search may ask of a store, on every store: words of any length, one time limit for
// all the reads of a request; and on PostgreSQL, a refusal that never quotes it, and plans
// that stay on the indexes.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import pg from "pg";
import { seedBooks } from "../../bench/catalogue.js";
import type { Book } from "../../src/rules/book.js";
import { searchTerms } from "../../src/rules/search.js";
import { PostgresRefusedError, withStoreErrors } from "../../src/store/postgres/errors.js";
import { openPostgresStore } from "../../src/store/postgres/store.js";
import { SEARCH_BOUNDS } from "../../src/store/sqlite/listing.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import {
  type BookPage,
  type BookQuery,
  type BookStore,
  SearchTooBroadError,
  StoreUnavailableError,
} from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import {
  commonBooks,
  DEFAULT_TEST_DATABASE_URL,
  freshPostgresSchema,
  type OpenedStore,
  storesUnderTest,
} from "../support/helpers.js";
import { LONG_WORD_TITLES } from "../support/long-words.js";
import { insertStoredBooks, pgConnect } from "../support/pg.js";

const booksOf = (page: BookPage): Book[] => JSON.parse(`[${page.json}]`);
const kinds = await storesUnderTest({ throughPgbouncer: true });
const postgresKind = kinds.find((k) => k.name === "postgres");

for (const kind of kinds) {
  describe(`search limits on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let store: BookStore;
    before(async () => {
      opened = await kind.open();
      store = opened.store;
    });
    after(() => opened?.dispose());

    test("words of any length are kept and found, the same on every store", async () => {
      const tag = `w${Date.now().toString(36)}`;
      const created: Record<string, Book> = {};
      for (const [name, title] of Object.entries(LONG_WORD_TITLES)) {
        created[name] = await store.create({ title, author: `${tag} Anon`, year: 2000 });
        assert.deepEqual(await store.get(created[name].id), created[name]);
      }
      const found = async (q: string) => {
        const page = await store.list({ after: 0, limit: 10, search: searchTerms(`${tag} ${q}`) });
        const names = Object.entries(created).map(([name, book]) => [book.id, name]);
        const byId = new Map(names as [number, string][]);
        return booksOf(page).map((book) => byId.get(book.id));
      };
      const { hangul, voiced } = LONG_WORD_TITLES;
      assert.deepEqual(await found("\u3315".repeat(200)), ["squared", "mixed"]);
      assert.deepEqual(await found(`x${"\u3315".repeat(199)}`), ["mixed"]);
      assert.deepEqual(await found("\ufdf2".repeat(200)), ["ligature"]);
      assert.deepEqual(await found("\u0958".repeat(200)), ["nukta"]);
      assert.deepEqual(await found(hangul.slice(150, 350)), ["hangul"]);
      assert.deepEqual(await found(voiced.slice(3, 200)), ["voiced"]);
      // Sorted by title, and counted, as well.
      const sorted = await store.list({
        after: 0,
        limit: 10,
        sort: "title",
        search: searchTerms(tag),
      });
      assert.equal(sorted.count, 6);
      assert.equal(await store.count({ search: searchTerms(`${tag} ${"\u3315".repeat(200)}`) }), 2);
    });

    test("a search's reads share one time limit: once it has passed, each is refused", async () => {
      const tag = `t${Date.now().toString(36)}`;
      await store.create({ title: `${tag} Solaris`, author: "Stanisław Lem", year: 1961 });
      const search = searchTerms(tag);
      // Begun an hour ago: whatever the store's limit, it has passed.
      const late = Date.now() - 3_600_000;
      const query: BookQuery = { after: 0, limit: 10, search, searchStarted: late };
      await assert.rejects(store.list(query), SearchTooBroadError);
      await assert.rejects(store.list({ ...query, sort: "title" }), SearchTooBroadError);
      await assert.rejects(store.count({ search, searchStarted: late }), SearchTooBroadError);
      // Begun now, the same reads answer; what has no search has no limit.
      const now = Date.now();
      assert.equal((await store.list({ ...query, searchStarted: now })).count, 1);
      assert.equal(await store.count({ search, searchStarted: now }), 1);
      assert.equal((await store.list({ after: 0, limit: 1, searchStarted: late })).count, 1);
    });
  });
}

describe("search limits on a SQLite file", () => {
  test("a count in the counter's thread has only what is left of the search's limit", async () => {
    const dir = mkdtempSync(join(tmpdir(), "search-limits-"));
    const store = openSqliteStore(join(dir, "books.db"));
    try {
      await store.create({ title: "Solaris", author: "Stanisław Lem", year: 1961 });
      const search = searchTerms("solaris");
      await assert.rejects(
        store.count({ search, searchStarted: Date.now() - 3_600_000 }),
        SearchTooBroadError,
      );
      assert.equal(await store.count({ search, searchStarted: Date.now() }), 1);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("search limits on a busy SQLite counter", () => {
  test("a count kept waiting by the counts before it is the store's (unavailable), not too broad", async () => {
    const dir = mkdtempSync(join(tmpdir(), "search-limits-"));
    const path = join(dir, "books.db");
    await openSqliteStore(path).close();
    await seedBooks({ kind: "sqlite", path }, commonBooks(300_000));
    const store = openSqliteStore(path, { ...SEARCH_BOUNDS, limitMs: 10 });
    try {
      const count = (q: string) =>
        store.count({ search: searchTerms(q), searchStarted: Date.now() });
      // Every book matches: counting them alone takes longer than the limit, whatever else.
      const broad = count("common");
      // A rare word, sent while the counter's thread still reads the broad count.
      const rare = count("123457");
      // Both awaited at once: the rare count may be refused first, and a refusal no one
      // awaits yet would end the test as an unhandled rejection.
      await Promise.all([
        assert.rejects(broad, SearchTooBroadError),
        assert.rejects(rare, StoreUnavailableError),
      ]);
      // Once the thread is idle again, the same rare count answers at once.
      let answer: number | undefined;
      for (let tries = 0; tries < 50 && answer === undefined; tries++) {
        answer = await count("123457").catch(() => undefined);
        if (answer === undefined) await new Promise((done) => setTimeout(done, 100));
      }
      assert.equal(answer, 1);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("search limits on PostgreSQL", { skip: postgresKind?.skip ?? "no PostgreSQL" }, () => {
  const options = { poolSize: 1, timeoutMs: 10_000, preparedStatements: true, description: "t" };

  test("a search held by a lock elsewhere is the store's: unavailable within what is left", async () => {
    const schema = await freshPostgresSchema();
    const store = await openPostgresStore(schema.dbUrl, { ...options, searchTimeoutMs: 4_000 });
    const db = await pgConnect(schema.dbUrl);
    try {
      await store.create({ title: "Solaris", author: "Stanisław Lem", year: 1961 });
      // A lock held elsewhere keeps every read of the books waiting.
      await db.script("BEGIN; LOCK TABLE books IN ACCESS EXCLUSIVE MODE");
      const started = Date.now();
      // 3.7 s of the 4 s are gone: the statement has 0.3 s, not 4; and the request is not to
      // blame for the wait, the store is.
      const query = { after: 0, limit: 10, search: searchTerms("solaris") };
      await assert.rejects(
        store.list({ ...query, searchStarted: started - 3_700 }),
        StoreUnavailableError,
      );
      const took = Date.now() - started;
      assert.ok(took < 2_500, `refused after ${took} ms`);
      await assert.rejects(
        store.count({ search: query.search, searchStarted: Date.now() - 3_700 }),
        StoreUnavailableError,
      );
      await db.script("ROLLBACK");
      // The same search on an idle store answers.
      assert.equal((await store.list({ ...query, searchStarted: Date.now() })).count, 1);
    } finally {
      await db.script("ROLLBACK").catch(() => {});
      await db.end();
      await store.close();
      await schema.drop();
    }
  });

  test("a search PostgreSQL ends at its limit while it reads is too broad", async () => {
    const schema = await freshPostgresSchema();
    const store = await openPostgresStore(schema.dbUrl, { ...options, searchTimeoutMs: 5 });
    const db = await pgConnect(schema.dbUrl);
    try {
      await insertStoredBooks(db, commonBooks(50_000));
      // Counting 50,000 matches takes far longer than 5 ms on an idle store.
      await assert.rejects(
        store.count({ search: searchTerms("common"), searchStarted: Date.now() }),
        SearchTooBroadError,
      );
    } finally {
      await db.end();
      await store.close();
      await schema.drop();
    }
  });

  test("a statement PostgreSQL refuses is told by its code, never by words it quotes", async () => {
    const db = new pg.Client({
      connectionString: process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL,
    });
    await db.connect();
    const words = `private${"x".repeat(3_000)}`;
    const refusal = await withStoreErrors(() => db.query("SELECT $1::tsquery", [words])).then(
      () => assert.fail("PostgreSQL took a word of 3,007 bytes"),
      (error: unknown) => error,
    );
    await db.end();
    assert.ok(refusal instanceof PostgresRefusedError);
    assert.equal(refusal.code, "54000");
    // What a log line holds of it: pino writes its message, stack and own fields.
    const logged = JSON.stringify({ ...refusal, message: refusal.message, stack: refusal.stack });
    assert.ok(!logged.includes("private"), logged);
  });

  test("searches on a never-analysed table read through the index, also past 5 on a connection", async () => {
    const schema = await freshPostgresSchema();
    // One connection, named statements: PostgreSQL may plan them generically after 5 runs.
    const store = await openPostgresStore(schema.dbUrl, options);
    const db = await pgConnect(schema.dbUrl);
    await db.script("ALTER TABLE books SET (autovacuum_enabled = false)");
    const books = 100_000;
    await insertStoredBooks(db, commonBooks(books));
    // A rare word each time: one match, found past the first window of every order.
    for (let i = 0; i < 8; i++) {
      const word = String(50_000 + i * 37);
      const sort = i % 2 === 0 ? "id" : "title";
      const page = await store.list({ after: 0, limit: 10, sort, search: searchTerms(word) });
      assert.deepEqual(
        booksOf(page).map((b) => b.title),
        [`Common ${word}`],
      );
    }
    // A write on the same connection: once the statistics count it, they count the searches.
    await store.create({ title: "Marker", author: "Marker", year: 2000 });
    await store.close();
    let stats: { n_tup_ins: number; seq_tup_read: number } | undefined;
    for (let tries = 0; tries < 100 && (stats?.n_tup_ins ?? 0) < books + 1; tries++) {
      await new Promise((done) => setTimeout(done, 200));
      [stats] = await db.sql<{ n_tup_ins: number; seq_tup_read: number }>`
        SELECT n_tup_ins, seq_tup_read FROM pg_stat_user_tables
        WHERE relid = 'books'::regclass`;
    }
    assert.equal(stats?.n_tup_ins, books + 1, "the statistics never counted the searches");
    // A whole scan would have read the 100,000 books at least once.
    assert.ok((stats?.seq_tup_read ?? 0) < books, `books read by scans: ${stats?.seq_tup_read}`);
    await db.end();
    await schema.drop();
  });
});
