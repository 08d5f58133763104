// What the SQLite store alone does: its file and the writer's thread, other connections on
// the same file, the catalogues of earlier builds. The suite of every store: shared.test.ts.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { AccountStore, Role } from "../../src/store/accounts.js";
import { LATEST_VERSION, MIGRATIONS } from "../../src/store/migrations.js";
import { SEARCH_BOUNDS } from "../../src/store/sqlite/listing.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { StoreOpenError } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import {
  asSent,
  assertOldShelfFound,
  booksOf,
  DUNE,
  nextTurn,
  OLD_SHELF,
  OLD_VERSIONS,
  walksEveryMatch,
} from "./store-helpers.js";

const READER = { role: "reader", passwordHash: "scrypt$x", tokensValidFrom: 0 } as const;

describe("SQLite store", () => {
  test("a write commits in the writer's thread while the event loop is held", async () => {
    // The row shows to another connection while this thread is busy: only a thread of
    // the store's own can have committed it (a writer on this thread would wait).
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const store = openSqliteStore(path);
    const title = `Committed elsewhere ${Date.now()}`;
    const created = store.create({ ...DUNE, title });
    const reader = new DatabaseSync(path, { readOnly: true });
    const seen = () => reader.prepare("SELECT count(*) AS n FROM books WHERE title = ?").get(title);
    const until = Date.now() + 10_000;
    while ((seen() as { n: number }).n === 0 && Date.now() < until) {}
    const visible = (seen() as { n: number }).n;
    reader.close();
    await created;
    assert.equal(visible, 1, "the book was not committed while the event loop was held");
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the folder is created, and data is still there after reopening", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "nested", "books.db");
    const first = openSqliteStore(path);
    const book = await first.create(DUNE);
    await first.close();
    const second = openSqliteStore(path);
    assert.deepEqual(await second.get(book.id), book);
    await second.close();
    const db = new DatabaseSync(path);
    assert.equal(db.prepare("PRAGMA journal_mode").get()?.journal_mode, "wal");
    assert.deepEqual(
      db
        .prepare("SELECT version FROM schema_migrations ORDER BY version")
        .all()
        .map((row) => row.version),
      MIGRATIONS.map(({ version }) => version),
    );
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a listing sees what another connection wrote since the last listing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const store = openSqliteStore(path);
    const mine = await store.create(DUNE);
    assert.deepEqual(booksOf(await store.list({ after: 0, limit: 10 })), [asSent(mine)]);
    const other = new DatabaseSync(path);
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

  test("reads of books in one turn share a snapshot; the next turn, or a write of its own, sees every commit", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const store = openSqliteStore(path);
    const book = await store.create(DUNE);
    const yearOf = async (id: number) => (await store.get(id))?.year;
    assert.equal(await yearOf(book.id), DUNE.year);
    // Another writer waits for the store's threads as they start (or checkpoint); were this
    // turn's snapshot to hold it up, nothing could end the wait, and it would fail.
    const other = new DatabaseSync(path, { timeout: 5_000 });
    // The snapshot of this turn's reads never holds up another writer.
    other.prepare("UPDATE books SET year = 1966 WHERE id = ?").run(book.id);
    assert.equal(await yearOf(book.id), DUNE.year);
    await nextTurn();
    assert.equal(await yearOf(book.id), 1966);
    // A write of the store's own sees the other connection's commit. That connection holds
    // the write lock as the write is asked for, so it commits first.
    await nextTurn();
    other.exec(`BEGIN IMMEDIATE; UPDATE books SET title = 'Dune Messiah' WHERE id = ${book.id}`);
    const updated = store.update(book.id, { year: 1969 });
    other.exec("COMMIT");
    // The read sees the other connection's commit; the store's own write runs on its thread
    // beside this one, so it may have committed by now, or not.
    const read = await store.get(book.id);
    assert.equal(read?.title, "Dune Messiah");
    assert.ok(read?.year === 1966 || read?.year === 1969, `year ${read?.year}`);
    assert.deepEqual(asSent(await updated), {
      ...asSent(book),
      title: "Dune Messiah",
      year: 1969,
    });
    assert.deepEqual(await store.get(book.id), await updated);
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a commit of the store forgets the books it changed; another connection's, every book kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const { store, ids, titles, other } = await keptShelf(path);
    const [dune, emma, ubik] = ids;
    await store.update(emma, { year: 1816 });
    assert.deepEqual(await titles(), ["Dune", "Emma 2", "Ubik"], "the store's commit forgot Emma");
    await store.remove(ubik);
    assert.deepEqual(await titles(), ["Dune", "Emma 2", undefined]);
    // Another connection's change forgets everything kept, even while a write of the store's
    // own is on its way (its commit may come before or after).
    const pending = store.update(emma, { year: 1817 });
    other.prepare("UPDATE books SET year = 1966 WHERE id = ?").run(emma);
    assert.deepEqual(await titles(), ["Dune 2", "Emma 2", undefined]);
    await pending;
    assert.deepEqual(await titles(), ["Dune 2", "Emma 2", undefined]);
    other.exec(`BEGIN; UPDATE books SET title = 'Dune 3' WHERE id = ${dune};
      UPDATE books_change_count SET n = n - 1; COMMIT`);
    other.prepare("DELETE FROM books WHERE id = ?").run(emma);
    assert.deepEqual(await titles(), ["Dune 3", undefined, undefined]);
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("two stores writing one file: every create logged, each entry with a sequence of its own", async () => {
    // Each writer counts a transaction's sequences from what the file holds when it begins:
    // the other's entries, committed between, are counted too (a command's writes beside the
    // service's, say).
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const [first, second] = [openSqliteStore(path), openSqliteStore(path)];
    for (let round = 0; round < 5; round++) {
      await Promise.all([
        ...Array.from({ length: 4 }, (_, i) => first.create({ ...DUNE, year: round * 10 + i })),
        ...Array.from({ length: 4 }, (_, i) => second.create({ ...DUNE, year: round * 10 + i })),
      ]);
    }
    const entries = await first.changes?.list(0, 100);
    assert.equal(entries?.length, 40);
    assert.equal(new Set(entries?.map((entry) => entry.seq)).size, 40);
    assert.equal(new Set(entries?.map((entry) => entry.id)).size, 40);
    await Promise.all([first.close(), second.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("account writes in a group with books answer each for itself, and forget no book kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const { store, ids, titles, other } = await keptShelf(path);
    const [dune, emma, ubik] = ids;
    const accounts = store.accounts as AccountStore;
    // Accounts whose ids are those of the books: an account's id must forget no book.
    for (const name of ["ada", "bo", "cy"]) await accounts.create({ ...READER, name });
    assert.deepEqual(await titles(), ["Dune", "Emma", "Ubik"], "kept");
    // Sent while another connection holds the lock, they wait, and commit, together.
    const together = async <T>(writes: () => Promise<T>) => {
      other.exec("BEGIN IMMEDIATE");
      const sent = writes();
      await sleep(200);
      other.exec("ROLLBACK");
      return sent;
    };
    const [updated, taken, changed, removed, added] = await together(() =>
      Promise.all([
        store.update(emma, { year: 1816 }),
        accounts.create({ ...READER, name: "ada" }),
        accounts.update(dune, { role: "librarian" }),
        accounts.remove(ubik),
        accounts.create({ ...READER, name: "dee" }),
      ]),
    );
    assert.equal(updated?.year, 1816);
    assert.equal(taken, undefined, "a taken name");
    assert.deepEqual(changed, { id: dune, name: "ada", role: "librarian", enabled: true });
    assert.equal(removed, true);
    assert.equal(added?.name, "dee");
    assert.deepEqual(await titles(), ["Dune", "Emma 2", "Ubik"], "only Emma forgotten");
    // An account write that fails, fails alone: the books beside it commit.
    const [kindred, refused, eve] = await together(() =>
      Promise.allSettled([
        store.create({ ...DUNE, title: "Kindred" }),
        accounts.update(dune, { role: "owner" as Role }),
        accounts.create({ ...READER, name: "eve" }),
      ]),
    );
    assert.equal(kindred.status === "fulfilled" && kindred.value.title, "Kindred");
    assert.equal(refused.status, "rejected");
    assert.equal(eve.status === "fulfilled" && eve.value?.name, "eve");
    assert.equal((await accounts.get(dune))?.role, "librarian");
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a search of many matches reads bounded windows; its pages still walk every match in order", async () => {
    // Bounds small enough that 300 books take every plan: exact (few matches), and windows
    // of 25 books by id (the word index) and by each field (the field's index).
    const store = openSqliteStore(":memory:", { ...SEARCH_BOUNDS, fewMatches: 10, window: 25 });
    await walksEveryMatch(store);
    await store.close();
  });

  for (const before of OLD_VERSIONS)
    test(`a catalogue from before version ${before} is searched and sorted after start-up`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "books-"));
      const path = join(dir, "books.db");
      const db = new DatabaseSync(path);
      db.exec(`CREATE TABLE schema_migrations (
      version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (datetime('now'))) STRICT`);
      for (const step of MIGRATIONS.filter((m) => m.version < before)) {
        db.exec(step.sqlite);
        db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
      }
      const insert = db.prepare("INSERT INTO books (title, author, year) VALUES (?, ?, ?)");
      for (const [title, author, year] of OLD_SHELF) insert.run(title, author, year);
      db.close();
      const store = openSqliteStore(path);
      await assertOldShelfFound(store);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

  test("a catalogue from version 13: a book's time from its kept entry, none before the log", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const db = new DatabaseSync(path);
    db.exec(`CREATE TABLE schema_migrations (
      version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (datetime('now'))) STRICT`);
    for (const step of MIGRATIONS.filter((m) => m.version <= 13)) {
      db.exec(step.sqlite);
      db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
    }
    const at = Date.UTC(2026, 10, 2, 9, 30);
    db.exec(`INSERT INTO books (title, author, year) VALUES ('Old', 'Before the log', 1900);
      INSERT INTO books (title, author, year, last_change) VALUES ('New', 'Logged', 2026, 1);
      INSERT INTO changes (seq, op, book_id, after, at) VALUES (1, 'create', 2, '{}', ${at})`);
    db.close();
    const store = openSqliteStore(path);
    assert.equal((await store.get(1))?.changedAt, null);
    assert.equal((await store.get(2))?.changedAt, at);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("writes go on while the search index writes its own pages (tombstones past 2^53)", async () => {
    // Deleting from the word index writes tombstone pages whose rowids are above 2^53, and
    // SQLite then reports one as the last inserted rowid of the next write: Node 26 threw
    // RangeError reading it, and that write failed with 500.
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const store = openSqliteStore(join(dir, "books.db"));
    for (let round = 0; round < 60; round++) {
      const made = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.create({ title: `Round ${round} book ${i}`, author: "Anon", year: 2000 }),
        ),
      );
      await Promise.all(made.map((book) => store.update(book.id, { title: `${book.title} b` })));
      await Promise.all(made.filter((_, i) => i % 3 === 0).map((book) => store.remove(book.id)));
      // Reads too: the read transaction a turn's reads share begins after such a write.
      const read = await Promise.all(made.map((book) => store.get(book.id)));
      assert.equal(read.filter((book) => book !== undefined).length, 5);
    }
    assert.equal(booksOf(await store.list({ after: 0, limit: 1000 })).length, 60 * 5);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("under a stream of writes the WAL file stays within its bound (a few MiB)", async () => {
    // The writer copies the WAL back into the database every 1,000 frames (SQLite's default),
    // and SQLite then writes the WAL from its start again, so a small disk's last room is not
    // held by the WAL; these updates write some 220 MiB of frames.
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const store = openSqliteStore(path);
    const ids: number[] = [];
    for (let round = 0; round < 20; round++) {
      const made = await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          store.create({ title: `Book ${round}-${i}`, author: `Author ${i}`, year: 2000 }),
        ),
      );
      ids.push(...made.map((book) => book.id));
    }
    let largest = 0;
    for (let round = 0; round < 120; round++) {
      await Promise.all(
        Array.from({ length: 200 }, (_, i) => {
          const id = ids[(round * 7919 + i * 104_729) % ids.length] as number;
          return store.update(id, { title: `Renamed ${round} ${i}` });
        }),
      );
      largest = Math.max(largest, statSync(`${path}-wal`).size);
    }
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    // 1,000 frames of 4 KiB and their headers, and the commit that passed them: one group's.
    assert.ok(largest > 3.5 * 2 ** 20, `the WAL grew to ${largest} bytes only`);
    assert.ok(largest < 12 * 2 ** 20, `the WAL grew to ${largest} bytes`);
  });

  test("a store opening while another connection holds the file's lock waits for it", async () => {
    // As a worker starting beside another, or an operator's sqlite3 shell: the lock is held
    // for a moment. The wait must be set before the first statement that needs the lock, or
    // the store fails at once with "database is locked".
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    const holder = spawn(process.execPath, [
      "--input-type=module",
      "-e",
      `import { DatabaseSync } from "node:sqlite";
       const db = new DatabaseSync(${JSON.stringify(path)});
       db.exec("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE held (x); COMMIT");
       process.stdout.write("held\\n");
       setTimeout(() => db.close(), 500);`,
    ]);
    try {
      await once(holder.stdout, "data");
      const store = openSqliteStore(path);
      assert.equal((await store.create(DUNE)).title, DUNE.title);
      await store.close();
    } finally {
      holder.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a file that is not a database fails with StoreOpenError", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "notes.txt");
    writeFileSync(path, "this is not a database, just some text that is long enough ".repeat(20));
    assert.throws(() => openSqliteStore(path), StoreOpenError);
    rmSync(dir, { recursive: true, force: true });
  });

  test("a schema newer than this build fails with StoreOpenError", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-"));
    const path = join(dir, "books.db");
    await openSqliteStore(path).close();
    const db = new DatabaseSync(path);
    db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(LATEST_VERSION + 1);
    db.close();
    assert.throws(() => openSqliteStore(path), /newer than this build/);
    rmSync(dir, { recursive: true, force: true });
  });
});

/**
 * A store on the file at `path` that keeps Dune, Emma and Ubik, whose titles another
 * connection (`other`, left open) then changed, the change count set back: a change the store
 * cannot see, so every book it keeps still shows as it was until the store forgets it.
 * `titles` reads the three in a turn of their own.
 */
async function keptShelf(path: string) {
  const store = openSqliteStore(path);
  const shelf = await Promise.all(
    ["Dune", "Emma", "Ubik"].map((title) => store.create({ ...DUNE, title })),
  );
  const titles = async () => {
    await nextTurn();
    return (await Promise.all(shelf.map((book) => store.get(book.id)))).map((b) => b?.title);
  };
  assert.deepEqual(await titles(), ["Dune", "Emma", "Ubik"]);
  const other = new DatabaseSync(path, { timeout: 5_000 });
  other.exec(`BEGIN; UPDATE books SET title = title || ' 2';
    UPDATE books_change_count SET n = n - 3; COMMIT`);
  assert.deepEqual(await titles(), ["Dune", "Emma", "Ubik"], "kept");
  const ids = shelf.map((book) => book.id) as [number, number, number];
  return { store, ids, titles, other };
}
