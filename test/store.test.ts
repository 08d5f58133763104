// One BookStore suite, run on SQLite and on PostgreSQL.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import Database from "better-sqlite3";
import postgres from "postgres";
import type { Book } from "../src/books/book.js";
import { LATEST_VERSION, MIGRATIONS } from "../src/store/migrations.js";
import { openStore } from "../src/store/open.js";
import { openSqliteStore } from "../src/store/sqlite.js";
import {
  type BookPage,
  type BookQuery,
  type BookStore,
  StoreOpenError,
} from "../src/store/store.js";
import { freshPostgresSchema, type OpenedStore, storesUnderTest } from "./helpers.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };
const booksOf = (page: BookPage): Book[] => JSON.parse(`[${page.json}]`);
const kinds = await storesUnderTest();
const postgresKind = kinds.find((k) => k.name === "postgres");

for (const kind of kinds) {
  describe(`BookStore on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let store: BookStore;
    before(async () => {
      opened = await kind.open();
      store = opened.store;
    });
    after(() => opened?.dispose());

    test("create returns the book with a positive integer id, as a JavaScript number", async () => {
      const book = await store.create(DUNE);
      assert.equal(typeof book.id, "number");
      assert.ok(Number.isSafeInteger(book.id) && book.id > 0);
      assert.deepEqual(book, { id: book.id, ...DUNE });
    });

    test("get returns what create stored, and undefined for an absent id", async () => {
      const book = await store.create(DUNE);
      assert.deepEqual(await store.get(book.id), book);
      assert.equal(await store.get(Number.MAX_SAFE_INTEGER), undefined);
    });

    test("ids increase and a deleted id is never reused", async () => {
      const a = await store.create(DUNE);
      const b = await store.create(DUNE);
      assert.ok(b.id > a.id);
      assert.equal(await store.remove(b.id), true);
      const c = await store.create(DUNE);
      assert.ok(c.id > b.id);
    });

    test("update applies only the present fields and returns the stored record", async () => {
      const book = await store.create(DUNE);
      assert.deepEqual(await store.update(book.id, { year: 1966 }), { ...book, year: 1966 });
      assert.deepEqual(await store.update(book.id, { title: "Dune (rev.)" }), {
        ...book,
        title: "Dune (rev.)",
        year: 1966,
      });
      assert.deepEqual(await store.update(book.id, {}), {
        ...book,
        title: "Dune (rev.)",
        year: 1966,
      });
      assert.deepEqual(await store.get(book.id), { ...book, title: "Dune (rev.)", year: 1966 });
    });

    test("update and remove of an absent id report it and change nothing", async () => {
      const before = await store.list({ after: 0, limit: 10_000 });
      assert.equal(await store.update(Number.MAX_SAFE_INTEGER, { year: 1 }), undefined);
      assert.equal(await store.remove(Number.MAX_SAFE_INTEGER), false);
      assert.deepEqual(await store.list({ after: 0, limit: 10_000 }), before);
    });

    test("remove deletes exactly one book", async () => {
      const keep = await store.create(DUNE);
      const gone = await store.create(DUNE);
      assert.equal(await store.remove(gone.id), true);
      assert.equal(await store.get(gone.id), undefined);
      assert.deepEqual(await store.get(keep.id), keep);
      assert.equal(await store.remove(gone.id), false);
    });

    test("list pages in id order: after an id, at most limit books, as compact JSON", async () => {
      const created = [];
      for (let i = 0; i < 7; i++) created.push(await store.create({ ...DUNE, year: 2000 + i }));
      const first = created[0]?.id as number;
      const page = await store.list({ after: first, limit: 3 });
      assert.deepEqual(booksOf(page), created.slice(1, 4));
      assert.equal(page.count, 3);
      assert.equal(page.lastId, created[3]?.id);
      assert.equal(
        page.json,
        created
          .slice(1, 4)
          .map((b) => JSON.stringify(b))
          .join(","),
      );
      const all = booksOf(await store.list({ after: 0, limit: 100_000 }));
      const ids = all.map((b) => b.id);
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => x - y),
      );
      assert.deepEqual(await store.list({ after: created[6]?.id as number, limit: 10 }), {
        json: "",
        count: 0,
        lastId: 0,
        lastKey: null,
      });
    });

    test("list filters: text in title or author in any case, exact author, year, together", async () => {
      const tag = `f${Date.now().toString(36)}`;
      const books = [
        { title: `${tag} The Left Hand of Darkness`, author: "Ursula K. Le Guin", year: 1969 },
        { title: `${tag} The Dispossessed`, author: "Ursula K. Le Guin", year: 1974 },
        { title: `${tag} Kindred`, author: "Octavia E. Butler", year: 1979 },
        { title: `${tag} 100% Pure_Fun \\ "quoted"`, author: "Anon", year: 1974 },
      ];
      const created = [];
      for (const book of books) created.push(await store.create(book));
      const titles = async (query: Omit<BookQuery, "after" | "limit">, limit = 100) =>
        booksOf(await store.list({ after: 0, limit, ...query }))
          .filter((b) => b.title.startsWith(tag))
          .map((b) => b.title.slice(tag.length + 1));
      assert.deepEqual(await titles({ q: "DARKNESS" }), ["The Left Hand of Darkness"]);
      assert.deepEqual(await titles({ q: "le guin" }), [
        "The Left Hand of Darkness",
        "The Dispossessed",
      ]);
      assert.deepEqual(await titles({ q: "ss" }), [
        "The Left Hand of Darkness",
        "The Dispossessed",
      ]);
      assert.deepEqual(await titles({ q: "%" }), ['100% Pure_Fun \\ "quoted"']);
      assert.deepEqual(await titles({ q: "0% P" }), ['100% Pure_Fun \\ "quoted"']);
      assert.deepEqual(await titles({ q: "e_F" }), ['100% Pure_Fun \\ "quoted"']);
      assert.deepEqual(await titles({ q: '"quoted"' }), ['100% Pure_Fun \\ "quoted"']);
      assert.deepEqual(await titles({ q: "\\" }), ['100% Pure_Fun \\ "quoted"']);
      assert.deepEqual(await titles({ q: "nowhere to be found" }), []);
      assert.deepEqual(await titles({ author: "Octavia E. Butler" }), ["Kindred"]);
      assert.deepEqual(await titles({ author: "octavia e. butler" }), []);
      assert.deepEqual(await titles({ year: 1974 }), [
        "The Dispossessed",
        '100% Pure_Fun \\ "quoted"',
      ]);
      assert.deepEqual(await titles({ q: "the", year: 1974 }), ["The Dispossessed"]);
      assert.deepEqual(await titles({ author: "Ursula K. Le Guin", year: 1969, q: "hand" }), [
        "The Left Hand of Darkness",
      ]);
      // Pages of a filtered listing follow each other by id.
      const first = await store.list({ after: 0, limit: 1, q: tag });
      assert.deepEqual(booksOf(first), [created[0]]);
      const second = await store.list({ after: first.lastId, limit: 2, q: tag });
      assert.deepEqual(booksOf(second), created.slice(1, 3));
      // Changes reach the text index.
      await store.update(created[2]?.id as number, { title: `${tag} Parable of the Sower` });
      assert.deepEqual(await titles({ q: "sower" }), ["Parable of the Sower"]);
      assert.deepEqual(await titles({ q: "kindred" }), []);
      await store.remove(created[0]?.id as number);
      assert.deepEqual(await titles({ q: "darkness" }), []);
    });

    test("text survives exactly: quotes, SQL, scripts, emoji, years at both bounds", async () => {
      for (const book of [
        { title: "Robert'); DROP TABLE books;--", author: 'O"Brien', year: -9999 },
        { title: "百年孤独 — 🦋 Ñ", author: "Gabriel García Márquez", year: 9999 },
        { title: "t".repeat(500), author: "a".repeat(300), year: 0 },
      ]) {
        const created = await store.create(book);
        assert.deepEqual(await store.get(created.id), created);
        assert.deepEqual(created, { id: created.id, ...book });
        assert.deepEqual(booksOf(await store.list({ after: created.id - 1, limit: 1 })), [created]);
      }
    });

    test("concurrent writes (one group commit) each get their own result and all persist", async () => {
      const keep = await store.create(DUNE);
      const gone = await store.create(DUNE);
      const [created, updated, removed, missing] = await Promise.all([
        Promise.all(Array.from({ length: 200 }, (_, i) => store.create({ ...DUNE, year: i }))),
        store.update(keep.id, { title: "Kept" }),
        store.remove(gone.id),
        store.update(Number.MAX_SAFE_INTEGER, { year: 1 }),
      ]);
      assert.equal(new Set(created.map((b) => b.id)).size, 200);
      for (const [i, book] of created.entries()) assert.equal(book.year, i);
      for (const book of created) assert.deepEqual(await store.get(book.id), book);
      assert.deepEqual(updated, { ...keep, title: "Kept" });
      assert.equal(removed, true);
      assert.equal(missing, undefined);
      assert.equal(await store.get(gone.id), undefined);
    });

    test("ping resolves while the store is reachable", async () => {
      await store.ping();
    });
  });
}

describe("opening a store", () => {
  test("SQLite: the folder is created, and data is still there after reopening", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "nested", "books.db");
    const first = openSqliteStore(path);
    const book = await first.create(DUNE);
    await first.close();
    const second = openSqliteStore(path);
    assert.deepEqual(await second.get(book.id), book);
    await second.close();
    const db = new Database(path);
    assert.equal(db.pragma("journal_mode", { simple: true }), "wal");
    assert.deepEqual(
      db.prepare("SELECT version FROM schema_migrations ORDER BY version").all(),
      MIGRATIONS.map(({ version }) => ({ version })),
    );
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("SQLite: a listing sees what another connection wrote since the last listing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const store = openSqliteStore(path);
    const mine = await store.create(DUNE);
    assert.deepEqual(booksOf(await store.list({ after: 0, limit: 10 })), [mine]);
    const other = new Database(path);
    other
      .prepare("INSERT INTO books (title, author, year) VALUES ('Emma', 'Jane Austen', 1815)")
      .run();
    other.prepare("UPDATE books SET year = 1966 WHERE id = ?").run(mine.id);
    other.close();
    assert.deepEqual(
      booksOf(await store.list({ after: 0, limit: 10 })).map((b) => [b.title, b.year]),
      [
        ["Dune", 1966],
        ["Emma", 1815],
      ],
    );
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("SQLite: a file that is not a database fails with StoreOpenError", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "notes.txt");
    writeFileSync(path, "this is not a database, just some text that is long enough ".repeat(20));
    assert.throws(() => openSqliteStore(path), StoreOpenError);
    rmSync(dir, { recursive: true, force: true });
  });

  test("SQLite: a schema newer than this build fails with StoreOpenError", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    await openSqliteStore(path).close();
    const db = new Database(path);
    db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(LATEST_VERSION + 1);
    db.close();
    assert.throws(() => openSqliteStore(path), /newer than this build/);
    rmSync(dir, { recursive: true, force: true });
  });

  describe("PostgreSQL", { skip: postgresKind?.skip ?? "no PostgreSQL" }, () => {
    test("instances starting at once migrate once (advisory lock), and all serve", async () => {
      const schema = await freshPostgresSchema();
      const db = { kind: "postgres", url: schema.dbUrl } as const;
      const stores = await Promise.all(
        Array.from({ length: 4 }, () => openStore({ db, pgPoolSize: 1 })),
      );
      const created = await Promise.all(stores.map((s) => s.create(DUNE)));
      assert.equal(new Set(created.map((b) => b.id)).size, 4);
      const sql = postgres(schema.dbUrl, { max: 1, onnotice: () => {} });
      const versions = await sql`SELECT version FROM schema_migrations ORDER BY version`;
      assert.deepEqual(
        versions.map((row) => row.version),
        MIGRATIONS.map(({ version }) => version),
      );
      await sql.end();
      await Promise.all(stores.map((s) => s.close()));
      await schema.drop();
    });

    test("a schema newer than this build fails with StoreOpenError", async () => {
      const schema = await freshPostgresSchema();
      const db = { kind: "postgres", url: schema.dbUrl } as const;
      await (await openStore({ db, pgPoolSize: 1 })).close();
      const sql = postgres(schema.dbUrl, { max: 1, onnotice: () => {} });
      await sql`INSERT INTO schema_migrations (version) VALUES (${LATEST_VERSION + 1})`;
      await sql.end();
      await assert.rejects(openStore({ db, pgPoolSize: 1 }), (error: Error) => {
        assert.ok(error instanceof StoreOpenError);
        assert.match(error.message, /cannot prepare the PostgreSQL schema/);
        return true;
      });
      await schema.drop();
    });

    test("an unreachable server fails fast, naming the host and never the password", async () => {
      const db = {
        kind: "postgres",
        url: "postgres://postgres:hunter2secret@127.0.0.1:1/test",
      } as const;
      const started = Date.now();
      await assert.rejects(openStore({ db, pgPoolSize: 1 }), (error: Error) => {
        assert.ok(error instanceof StoreOpenError);
        assert.match(
          error.message,
          /cannot reach PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/test/,
        );
        assert.ok(!error.message.includes("hunter2secret"));
        return true;
      });
      assert.ok(Date.now() - started < 10_000);
    });
  });
});
