// What the PostgreSQL store alone does: instances that start and write at once, statements
// that gather writes, caches that see other clients, time limits, the catalogues of earlier
// builds. The suite of every store: shared.test.ts.

import assert from "node:assert/strict";
import { test } from "node:test";
import sql from "sql-template-tag";
import type { Book, BookChanges } from "../../src/rules/book.js";
import { indexWords, searchTerms, sortKey } from "../../src/rules/search.js";
import type { ChangeLog } from "../../src/store/changes.js";
import { LATEST_VERSION, MIGRATIONS } from "../../src/store/migrations.js";
import { openStore } from "../../src/store/open.js";
import { updateBooks } from "../../src/store/postgres/books.js";
import { openDb } from "../../src/store/postgres/pool.js";
import { BOOK_WRITES_LOCK } from "../../src/store/postgres/statement.js";
import { openPostgresStore } from "../../src/store/postgres/store.js";
import { type PostgresAddress, parsePostgresUrl } from "../../src/store/postgres/url.js";
import {
  type BookQuery,
  type BookStore,
  SearchTooBroadError,
  StoreOpenError,
  StoreUnavailableError,
} from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { commonBooks, freshPostgresSchema, storesUnderTest } from "../support/helpers.js";
import { insertStoredBooks, migrateThrough, type PgConnection, pgConnect } from "../support/pg.js";
import { freePort } from "../support/service.js";
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

const postgres = (await storesUnderTest()).find((k) => k.name === "postgres");

/** The statements that have changed books: the commit counter's trigger counts each (migration 5). */
const statementsOnBooks = async (db: PgConnection) =>
  Number((await db.sql<{ n: string }>`SELECT sum(commits) AS n FROM books_changes`)[0]?.n);

describe("PostgreSQL store", { skip: postgres?.skip ?? "no PostgreSQL" }, () => {
  test("instances starting at once migrate once (advisory lock), and all serve", async () => {
    const schema = await freshPostgresSchema();
    const db = { kind: "postgres", url: schema.dbUrl } as const;
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => openStore({ db, pgPoolSize: 1 })),
    );
    const created = await Promise.all(stores.map((s) => s.create(DUNE)));
    assert.equal(new Set(created.map((b) => b.id)).size, 4);
    const admin = await pgConnect(schema.dbUrl);
    const versions = await admin.sql`SELECT version FROM schema_migrations ORDER BY version`;
    assert.deepEqual(
      versions.map((row) => row.version),
      MIGRATIONS.map(({ version }) => version),
    );
    await admin.end();
    await Promise.all(stores.map((s) => s.close()));
    await schema.drop();
  });

  test("catalogues in two schemas of one database: a write waits only for its own's lock", async () => {
    const [one, other] = [await freshPostgresSchema(), await freshPostgresSchema()];
    const open = (url: string) =>
      openStore({ db: { kind: "postgres", url }, pgPoolSize: 1, dbTimeoutMs: 1_000 });
    const [first, second] = [await open(one.dbUrl), await open(other.dbUrl)];
    // A session holds the first catalogue's lock of book writes, as a long restore would.
    const holder = await pgConnect(one.dbUrl);
    await holder.sql`SELECT pg_advisory_lock(${BOOK_WRITES_LOCK}, hashtext(current_schema()))`;
    try {
      const started = Date.now();
      assert.equal((await second.create(DUNE)).title, DUNE.title);
      assert.ok(
        Date.now() - started < 900,
        `the other catalogue waited ${Date.now() - started} ms`,
      );
      await assert.rejects(first.create(DUNE), StoreUnavailableError);
    } finally {
      await holder.end();
      await Promise.all([first.close(), second.close()]);
      await Promise.all([one.drop(), other.drop()]);
    }
  });

  for (const before of OLD_VERSIONS)
    test(`a catalogue from before version ${before} is searched and sorted after start-up`, async () => {
      const schema = await freshPostgresSchema();
      const db = await pgConnect(schema.dbUrl);
      await migrateThrough(db, before - 1);
      for (const [title, author, year] of OLD_SHELF) {
        await db.sql`INSERT INTO books (title, author, year) VALUES (${title}, ${author}, ${year})`;
      }
      await db.end();
      const store = await openStore({
        db: { kind: "postgres", url: schema.dbUrl },
        pgPoolSize: 1,
      });
      await assertOldShelfFound(store);
      await store.close();
      await schema.drop();
    });

  test("a catalogue from version 13: a book's time from its kept entry, none before the log", async () => {
    const schema = await freshPostgresSchema();
    const db = await pgConnect(schema.dbUrl);
    await migrateThrough(db, 13);
    const at = Date.UTC(2026, 10, 2, 9, 30);
    await db.script(`INSERT INTO books (title, author, year) VALUES ('Old', 'Before the log', 1900);
      INSERT INTO changes (op, book_id, after, at) VALUES ('create', 2, '{}', ${at});
      INSERT INTO books (title, author, year, last_change) VALUES ('New', 'Logged', 2026, 1);`);
    await db.end();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 1 });
    assert.equal((await store.get(1))?.changedAt, null);
    assert.equal((await store.get(2))?.changedAt, at);
    await store.close();
    await schema.drop();
  });

  test("a catalogue written by version 7 finds words by their prefixes after start-up", async () => {
    // Version 7 wrote each field's words and its sort key; version 8 adds the words'
    // prefixes of 2, 3, 4 and 6 characters, which "tolk" and "hobb" are searched by.
    const schema = await freshPostgresSchema();
    const db = await pgConnect(schema.dbUrl);
    await migrateThrough(db, 7);
    for (const [title, author, year] of OLD_SHELF) {
      await db.sql`INSERT INTO books (title, author, year, title_words, author_words,
          title_key, author_key)
        VALUES (${title}, ${author}, ${year}, array_to_tsvector(${indexWords(title)}::text[]),
          array_to_tsvector(${indexWords(author)}::text[]), ${sortKey(title)},
          ${sortKey(author)})`;
    }
    await db.end();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 1 });
    await assertOldShelfFound(store);
    await store.close();
    await schema.drop();
  });

  /** Two stores on one fresh schema, as two instances of the service would have. */
  async function twoInstances() {
    const schema = await freshPostgresSchema();
    const db = { kind: "postgres", url: schema.dbUrl } as const;
    const mine = await openStore({ db, pgPoolSize: 2 });
    const theirs = await openStore({ db, pgPoolSize: 2 });
    return { schema, mine, theirs };
  }

  /**
   * A store with `count` books on a fresh schema, and another connection holding the books'
   * table locked, so that writes wait, until `release`.
   */
  async function storeBehindLock(pgPoolSize: number, count: number) {
    const schema = await freshPostgresSchema();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize });
    const created = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        store.create({ title: `B${i}`, author: "A", year: 1 }),
      ),
    );
    const holder = await pgConnect(schema.dbUrl);
    await holder.script("BEGIN; LOCK TABLE books IN EXCLUSIVE MODE");
    const release = async () => {
      await holder.script("COMMIT");
      await holder.end();
    };
    return { schema, store, created, release };
  }

  test("creates and reads sent together each get their own book; a book PostgreSQL refuses fails alone", async () => {
    // Sent in one turn, the 50 creates go in one statement, which fails and is tried again
    // for each book alone; the reads go together too.
    const schema = await freshPostgresSchema();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 1 });
    const books = Array.from({ length: 50 }, (_, i) => ({
      title: i === 20 ? "Nul \u0000 byte" : `Book ${i}`,
      author: `Author ${i % 7}`,
      year: 1900 + i,
    }));
    const results = await Promise.allSettled(books.map((book) => store.create(book)));
    const refused = results.flatMap((r, i) => (r.status === "rejected" ? [i] : []));
    assert.deepEqual(refused, [20]);
    const created = results.flatMap((r) => (r.status === "fulfilled" ? [asSent(r.value)] : []));
    assert.equal(new Set(created.map((b) => b.id)).size, 49);
    const absent = Number.MAX_SAFE_INTEGER;
    const ids = created.flatMap((book, i) => (i % 10 === 0 ? [absent, book.id] : [book.id]));
    const read = await Promise.all(ids.map(async (id) => asSent(await store.get(id))));
    assert.deepEqual(
      read,
      ids.map((id) => created.find((book) => book.id === id)),
    );
    assert.deepEqual(
      created.map(({ id, ...book }) => book),
      books.filter((_, i) => i !== 20),
    );
    assert.equal(await store.count({}), 49);
    await store.close();
    await schema.drop();
  });

  test("updates sent together each change their own book, in the order they came", async () => {
    // Sent in one turn, they go in one statement.
    const schema = await freshPostgresSchema();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 1 });
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.create({ title: `Book ${i}`, author: "A", year: 1900 + i }),
      ),
    );
    const [first, second] = created as [Book, Book];
    const absent = Number.MAX_SAFE_INTEGER;
    const updates: [number, BookChanges][] = [
      ...created.map((book, i): [number, BookChanges] => [book.id, { year: 2000 + i }]),
      [absent, { title: "Nowhere" }],
      // One book three times: each applies to what the one before left.
      [first.id, { title: "First again" }],
      [first.id, { author: "Someone Else" }],
      [first.id, { title: "First, last" }],
      [second.id, { title: "Émile ou de l'éducation", author: "Rousseau" }],
    ];
    const db = await pgConnect(schema.dbUrl);
    const statements = () => statementsOnBooks(db);
    const before = await statements();
    const results = await Promise.all(
      updates.map(async ([id, changes]) => asSent(await store.update(id, changes))),
    );
    // A round for each time a book is asked again, not a statement for every update.
    assert.equal((await statements()) - before, 4);
    await db.end();
    assert.equal(results[20], undefined);
    assert.deepEqual(results[23], {
      id: first.id,
      title: "First, last",
      author: "Someone Else",
      year: 2000,
    });
    assert.deepEqual(
      results.slice(2, 20),
      created.slice(2).map((book, i) => ({ ...asSent(book), year: 2002 + i })),
    );
    assert.deepEqual(asSent(await store.get(second.id)), {
      id: second.id,
      title: "Émile ou de l'éducation",
      author: "Rousseau",
      year: 2001,
    });
    // The search words follow the titles and authors changed.
    const found = await store.list({ after: 0, limit: 5, search: searchTerms("emile rousseau") });
    assert.deepEqual(
      booksOf(found).map((b) => b.id),
      [second.id],
    );
    assert.equal(await store.count({ search: searchTerms("someone") }), 1);
    await store.close();
    await schema.drop();
  });

  test("two statements of updates under way at once, on the same books, never deadlock", async () => {
    // With a pool of two, two batches run at once. Were each to lock its books in the order
    // its requests came, two with books in opposite orders would each hold a book the other
    // waits for, and PostgreSQL would end one after deadlock_timeout (its requests then
    // retried one by one, a second late).
    const schema = await freshPostgresSchema();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 1 });
    const created = await Promise.all(
      Array.from({ length: 2_000 }, (_, i) =>
        store.create({ title: `B${i}`, author: "A", year: i }),
      ),
    );
    const db = await openDb(parsePostgresUrl(schema.dbUrl) as PostgresAddress, {
      poolSize: 2,
      timeoutMs: 10_000,
      preparedStatements: true,
      applicationName: "test",
    });
    const ids = created.map((book) => book.id);
    for (let round = 0; round < 3; round++) {
      const [up, down] = await Promise.all([
        updateBooks(
          db,
          ids.map((id) => ({ id, changes: { year: 1000 + round } })),
        ),
        updateBooks(
          db,
          ids.toReversed().map((id) => ({ id, changes: { year: 2000 + round } })),
        ),
      ]);
      // Each request still gets its own book, in the order the requests came.
      assert.deepEqual(
        up.map((book) => book?.id),
        ids,
      );
      assert.deepEqual(
        down.map((book) => book?.id),
        ids.toReversed(),
      );
    }
    await db.end();
    await store.close();
    await schema.drop();
  });

  test("writes sent in one turn share one statement and one commit, whatever the pool's size", async () => {
    const schema = await freshPostgresSchema();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 2 });
    const db = await pgConnect(schema.dbUrl);
    // Counted from here: the migrations' statements on books count too.
    const started = await statementsOnBooks(db);
    const statements = async () => (await statementsOnBooks(db)) - started;
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.create({ title: `B${i}`, author: "A", year: 1 })),
    );
    assert.equal(await statements(), 1);
    await Promise.all(created.map((book, i) => store.update(book.id, { year: 2000 + i })));
    assert.equal(await statements(), 2, "the first two updates did not each take a connection");
    assert.deepEqual(
      await Promise.all(created.map((book) => store.remove(book.id))),
      created.map(() => true),
    );
    assert.equal(await statements(), 3);
    await db.end();
    await store.close();
    await schema.drop();
  });

  test("writes of every kind that arrive while the pool is busy gather until a connection is free", async () => {
    // A kind of write that started its own statement whenever none of its kind was under
    // way would only queue it behind the others' for the connection, each statement small.
    // Writes wait on the table's lock: the pool's one connection is held by the first.
    const { schema, store, created, release } = await storeBehindLock(1, 20);
    const db = await pgConnect(schema.dbUrl);
    const statements = () => statementsOnBooks(db);
    const before = await statements();
    const answers: Promise<unknown>[] = [];
    for (const [turn, kind] of ["update", "remove", "update", "remove"].entries()) {
      for (const book of created.slice(turn * 5, turn * 5 + 5)) {
        answers.push(
          kind === "update" ? store.update(book.id, { year: 2000 }) : store.remove(book.id),
        );
      }
      await nextTurn();
    }
    await release();
    const answered = await Promise.all(answers);
    assert.equal(answered.filter((answer) => answer === true).length, 10);
    // The first updates, then the deletes of both turns, then the later updates.
    assert.equal((await statements()) - before, 3);
    assert.deepEqual(
      booksOf(await store.list({ after: 0, limit: 100 })).map((book) => book.year),
      Array(10).fill(2000),
    );
    await db.end();
    await store.close();
    await schema.drop();
  });

  test("one write commits at a time: the others gather, and reads answer while it waits", async () => {
    // With a pool of two, a second turn's updates would take the other connection for a
    // statement of their own, and wait on the lock beside the first: reads would wait too.
    const { schema, store, created, release } = await storeBehindLock(2, 20);
    const db = await pgConnect(schema.dbUrl);
    const before = await statementsOnBooks(db);
    const updates: Promise<unknown>[] = [];
    for (let turn = 0; turn < 4; turn++) {
      for (const book of created.slice(turn * 5, turn * 5 + 5)) {
        updates.push(store.update(book.id, { year: 2000 + turn }));
      }
      await nextTurn();
    }
    // The lock still held: a read by id answers on the connection left to reads.
    const last = created.at(-1) as Book;
    try {
      assert.deepEqual(await store.get(last.id), last);
    } finally {
      await release();
    }
    await Promise.all(updates);
    // The first turn's updates, then the three later turns' in one statement.
    assert.equal((await statementsOnBooks(db)) - before, 2);
    assert.deepEqual(
      booksOf(await store.list({ after: 0, limit: 100 })).map((book) => book.year),
      created.map((_, i) => 2000 + Math.floor(i / 5)),
    );
    await db.end();
    await store.close();
    await schema.drop();
  });

  test("writes of each kind commit in the order they arrived, never behind a later kind's", async () => {
    // Were the write slot handed round from whichever kind ran last, a read between would
    // send it back to the kinds before deletes each time, and a stream of updates would keep
    // deletes waiting.
    const { schema, store, created, release } = await storeBehindLock(2, 6);
    const ids = created.map((book) => book.id);
    const answered: string[] = [];
    const answer = (label: string, request: Promise<unknown>) =>
      request.then(() => answered.push(label));
    const requests = [answer("first update", store.update(ids[0] as number, { year: 2 }))];
    await nextTurn();
    requests.push(answer("delete", store.remove(ids[1] as number)));
    requests.push(answer("read", store.get(ids[2] as number)));
    await nextTurn();
    requests.push(answer("later update", store.update(ids[3] as number, { year: 3 })));
    try {
      await requests[2];
    } finally {
      await release();
    }
    await Promise.all(requests);
    assert.deepEqual(answered, ["read", "first update", "delete", "later update"]);
    await store.close();
    await schema.drop();
  });

  test("a year change writes no index of books (a HOT update); the year's own index follows", async () => {
    // An index of books on the year would have each year change write every index of
    // books, the word index's entries among them (migration 9, docs/performance.md).
    const schema = await freshPostgresSchema();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 1 });
    const book = asSent(await store.create(DUNE));
    const db = await openDb(parsePostgresUrl(schema.dbUrl) as PostgresAddress, {
      poolSize: 1,
      timeoutMs: 5_000,
      preparedStatements: true,
      applicationName: "test",
    });
    const inPlace = await db.transaction(async (tx) => {
      await updateBooks(tx, [{ id: book.id, changes: { year: 1966 } }]);
      const [row] = await tx.query<{ n: number }>(
        sql`SELECT pg_stat_get_xact_tuples_hot_updated('books'::regclass)::integer AS n`,
      );
      return row?.n;
    });
    assert.equal(inPlace, 1);
    assert.deepEqual(booksOf(await store.list({ after: 0, limit: 10, year: 1966 })), [
      { ...book, year: 1966 },
    ]);
    assert.deepEqual(booksOf(await store.list({ after: 0, limit: 10, year: DUNE.year })), []);
    await db.end();
    await store.close();
    await schema.drop();
  });

  test("a client writing the tables by their schema's name, on another search_path, is seen by the store", async () => {
    // As an operator's psql session, or a data-only pg_restore (search_path ''): the
    // triggers that keep the commit count and the year's index must find their tables.
    const schema = await freshPostgresSchema();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 1 });
    const dune = await store.create(DUNE);
    assert.deepEqual(await store.get(dune.id), dune);
    const elsewhere = new URL(schema.dbUrl);
    elsewhere.searchParams.delete("options");
    const db = await pgConnect(elsewhere.toString());
    await db.script(`SET search_path = ''`);
    const books = `${schema.name}.books`;
    await db.script(`UPDATE ${books} SET year = 1966 WHERE id = ${dune.id}`);
    await db.script(`INSERT INTO ${books} (title, author, year) VALUES ('Emma', 'Austen', 1815)`);
    await db.end();
    assert.deepEqual(await store.get(dune.id), { ...dune, year: 1966 });
    const byYear = await store.list({ after: 0, limit: 10, sort: "year" });
    assert.deepEqual(
      booksOf(byYear).map((b) => [b.title, b.year]),
      [
        ["Emma", 1815],
        ["Dune", 1966],
      ],
    );
    await store.close();
    await schema.drop();
  });

  test("deletes sent together each answer for their own book; a book asked twice goes once", async () => {
    // Sent in one turn, they go in one statement.
    const schema = await freshPostgresSchema();
    const store = await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 1 });
    const created = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.create({ title: `B${i}`, author: "A", year: 1 })),
    );
    const ids = [...created.map((book) => book.id), Number.MAX_SAFE_INTEGER, created[3]?.id];
    const results = await Promise.all(ids.map((id) => store.remove(id as number)));
    assert.deepEqual(results, [...created.map(() => true), false, false]);
    assert.equal((await store.list({ after: 0, limit: 20 })).count, 0);
    await store.close();
    await schema.drop();
  });

  test("a book read by id sees at once what another instance, or any client, wrote", async () => {
    const { schema, mine, theirs } = await twoInstances();
    const dune = await mine.create(DUNE);
    assert.deepEqual(await mine.get(dune.id), dune);
    assert.deepEqual(await mine.get(dune.id), dune);
    await theirs.update(dune.id, { year: 1966 });
    assert.equal((await mine.get(dune.id))?.year, 1966);
    const db = await pgConnect(schema.dbUrl);
    await db.sql`UPDATE books SET title = 'Dune Messiah' WHERE id = ${dune.id}`;
    assert.equal((await mine.get(dune.id))?.title, "Dune Messiah");
    await db.sql`DELETE FROM books WHERE id = ${dune.id}`;
    await db.end();
    assert.equal(await mine.get(dune.id), undefined);
    // Reads and writes interleaved from both instances: every read holds every write that
    // was answered before it began.
    const book = await theirs.create({ title: "Emma", author: "Jane Austen", year: 1800 });
    for (let year = 1801; year <= 1820; year++) {
      const reads = Array.from({ length: 4 }, () => mine.get(book.id));
      await theirs.update(book.id, { year });
      await Promise.all(reads);
      assert.equal((await mine.get(book.id))?.year, year);
    }
    await mine.close();
    await theirs.close();
    await schema.drop();
  });

  test("two instances writing at once log in commit order: a follower misses no entry", async (t) => {
    // Sequences are given at insert: without the lock of book writes (statement.ts), an entry
    // could commit after a higher one of the other instance, which the follower had already
    // read past (this test then fails every time). Conditional writes, a transaction of
    // several round trips, run beside the batched ones.
    const { schema, mine, theirs } = await twoInstances();
    const follower = await openStore({
      db: { kind: "postgres", url: schema.dbUrl },
      pgPoolSize: 1,
    });
    t.after(async () => {
      await Promise.all([mine.close(), theirs.close(), follower.close()]);
      await schema.drop();
    });
    const log = follower.changes as ChangeLog;
    let writing = true;
    const seen: number[] = [];
    const following = (async () => {
      for (let since = 0; ; ) {
        const last = !writing;
        const page = await log.list(since, 1_000);
        seen.push(...page.map((change) => change.seq));
        since = page.at(-1)?.seq ?? since;
        if (last && page.length === 0) return;
      }
    })();
    const writes = async (store: BookStore, name: string) => {
      const by = { name, account: null };
      const books = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.create({ ...DUNE, year: i }, by)),
      );
      for (let round = 0; round < 30; round++) {
        await Promise.all(
          books.flatMap((book, i) => [
            // A year each book has not had: every update changes it, and logs.
            store.update(book.id, { year: 1000 + round }, i % 2 === 0 ? "*" : undefined, by),
            store.create({ ...DUNE, title: `${name} ${round} ${i}` }, by),
          ]),
        );
      }
    };
    try {
      await Promise.all([writes(mine, "mine"), writes(theirs, "theirs")]);
    } finally {
      writing = false;
      await following;
    }
    const all = (await log.list(0, 10_000)).map((change) => change.seq);
    assert.equal(all.length, 2 * (10 + 30 * 20));
    assert.deepEqual(seen, all);
  });

  test("a listing sees at once what another instance, or any client, wrote", async () => {
    const { schema, mine, theirs } = await twoInstances();
    const titles = async () =>
      booksOf(await mine.list({ after: 0, limit: 10 })).map((b) => `${b.title} ${b.year}`);
    const dune = await mine.create(DUNE);
    assert.deepEqual(await titles(), ["Dune 1965"]);
    assert.deepEqual(await titles(), ["Dune 1965"], "the second listing comes from the cache");
    // Each write through the other instance shows in the very next listing here.
    const emma = await theirs.create({ title: "Emma", author: "Jane Austen", year: 1815 });
    assert.deepEqual(await titles(), ["Dune 1965", "Emma 1815"]);
    await theirs.update(dune.id, { year: 1966 });
    assert.deepEqual(await titles(), ["Dune 1966", "Emma 1815"]);
    await theirs.remove(emma.id);
    assert.deepEqual(await titles(), ["Dune 1966"]);
    // A client writing SQL of its own is seen too.
    const db = await pgConnect(schema.dbUrl);
    await db.sql`UPDATE books SET title = 'Dune Messiah' WHERE id = ${dune.id}`;
    await db.end();
    assert.deepEqual(await titles(), ["Dune Messiah 1966"]);
    // Reads and writes interleaved from both instances: every listing holds every write
    // that was answered before it began.
    let expected = 1;
    for (let round = 0; round < 20; round++) {
      const reads = Array.from({ length: 4 }, () => mine.list({ after: 0, limit: 100 }));
      await theirs.create({ title: `Book ${round}`, author: "Writer", year: 2000 });
      expected += 1;
      await Promise.all(reads);
      assert.equal((await mine.list({ after: 0, limit: 100 })).count, expected);
    }
    await mine.close();
    await theirs.close();
    await schema.drop();
  });

  test("a commit count lowered and raised back, or a new generation, empties the caches", async () => {
    const { schema, mine, theirs } = await twoInstances();
    const titles = async () =>
      booksOf(await mine.list({ after: 0, limit: 10 })).map((b) => b.title);
    const dune = await mine.create(DUNE);
    assert.deepEqual(await titles(), ["Dune"]);
    assert.equal((await mine.get(dune.id))?.title, "Dune");
    // What a failover that lost two acknowledged commits does to the count: two lower. Two
    // creates through another instance bring it back where this instance last read it.
    const db = await pgConnect(schema.dbUrl);
    await db.sql`UPDATE books_changes SET commits = commits - 2
      WHERE slot = (SELECT slot FROM books_changes ORDER BY commits DESC LIMIT 1)`;
    await theirs.create({ title: "Emma", author: "Jane Austen", year: 1815 });
    await theirs.create({ title: "Persuasion", author: "Jane Austen", year: 1817 });
    assert.deepEqual(await titles(), ["Dune", "Emma", "Persuasion"]);
    assert.equal((await mine.get(dune.id))?.title, "Dune");
    // A restore replaces the generation: whatever else is equal, nothing kept is served.
    await db.sql`ALTER TABLE books DISABLE TRIGGER books_changed`;
    await db.sql`UPDATE books SET title = 'Dune Messiah' WHERE id = ${dune.id}`;
    await db.sql`ALTER TABLE books ENABLE TRIGGER books_changed`;
    const kept = ["Dune", "Emma", "Persuasion"];
    assert.deepEqual(await titles(), kept, "kept while the version is the same");
    await db.sql`UPDATE catalogue_generation SET token = gen_random_uuid()::text`;
    assert.deepEqual(await titles(), ["Dune Messiah", "Emma", "Persuasion"]);
    // Books read by id are not kept: read anew each time.
    assert.equal((await mine.get(dune.id))?.title, "Dune Messiah");
    await db.end();
    await mine.close();
    await theirs.close();
    await schema.drop();
  });

  test("a search of many matches tests bounded windows; its pages still walk every match in order", async () => {
    const schema = await freshPostgresSchema();
    const store = await openPostgresStore(schema.dbUrl, {
      poolSize: 2,
      timeoutMs: 5_000,
      preparedStatements: true,
      description: "test",
      searchBounds: { fewMatches: 10, window: 25 },
    });
    await walksEveryMatch(store);
    await store.close();
    await schema.drop();
  });

  test("a search that runs past its time limit is refused, and the pool goes on serving", async () => {
    const schema = await freshPostgresSchema();
    const options = {
      poolSize: 1,
      timeoutMs: 5_000,
      preparedStatements: true,
      description: "test",
    };
    const hasty = await openPostgresStore(schema.dbUrl, { ...options, searchTimeoutMs: 1 });
    // 200,000 books that match "common": counting them reads every one, far longer than a
    // millisecond on any machine.
    const db = await pgConnect(schema.dbUrl);
    await insertStoredBooks(db, commonBooks(200_000));
    const broad = { search: searchTerms("comm"), sort: "title" } as const;
    await assert.rejects(hasty.count(broad), SearchTooBroadError);
    // How long a listing takes depends on the plan; a lock held elsewhere keeps it waiting,
    // and the same limit ends the wait.
    await db.script("BEGIN; LOCK TABLE books IN ACCESS EXCLUSIVE MODE");
    await assert.rejects(hasty.list({ after: 0, limit: 10, ...broad }), SearchTooBroadError);
    await db.script("ROLLBACK");
    await db.end();
    // The one connection of the pool is free again, and answers what has no limit.
    assert.equal((await hasty.list({ after: 0, limit: 3 })).count, 3);
    assert.equal((await hasty.get(1))?.title, "Common 1");
    await hasty.close();
    // Given the time, the same searches answer: few matches through the words' index, many
    // by walking the order's index.
    const patient = await openPostgresStore(schema.dbUrl, {
      ...options,
      searchTimeoutMs: 60_000,
    });
    const titles = async (query: Omit<BookQuery, "after" | "limit">) =>
      booksOf(await patient.list({ after: 0, limit: 3, ...query })).map((b) => b.title);
    assert.deepEqual(await titles({ search: searchTerms("comm 7") }), ["Common 7"]);
    assert.deepEqual(await titles(broad), ["Common 1", "Common 10", "Common 100"]);
    assert.deepEqual(await titles({ search: searchTerms("auth"), sort: "id", descending: true }), [
      "Common 200000",
      "Common 199999",
      "Common 199998",
    ]);
    assert.equal(await patient.count(broad), 200_000);
    await patient.close();
    await schema.drop();
  });

  test("a schema newer than this build fails with StoreOpenError", async () => {
    const schema = await freshPostgresSchema();
    const db = { kind: "postgres", url: schema.dbUrl } as const;
    await (await openStore({ db, pgPoolSize: 1 })).close();
    const admin = await pgConnect(schema.dbUrl);
    await admin.sql`INSERT INTO schema_migrations (version) VALUES (${LATEST_VERSION + 1})`;
    await admin.end();
    await assert.rejects(openStore({ db, pgPoolSize: 1 }), (error: Error) => {
      assert.ok(error instanceof StoreOpenError);
      assert.match(error.message, /cannot prepare the PostgreSQL schema/);
      return true;
    });
    await schema.drop();
  });

  test("an unreachable server fails fast, naming the host and never the password", async () => {
    // A port nothing listens on: the connection is refused.
    const port = await freePort();
    const db = {
      kind: "postgres",
      url: `postgres://postgres:hunter2secret@127.0.0.1:${port}/test`,
    } as const;
    const started = Date.now();
    await assert.rejects(openStore({ db, pgPoolSize: 1 }), (error: Error) => {
      assert.ok(error instanceof StoreOpenError);
      assert.ok(
        error.message.includes(
          `cannot reach PostgreSQL at postgres://postgres@127.0.0.1:${port}/test`,
        ),
        error.message,
      );
      assert.ok(!error.message.includes("hunter2secret"));
      return true;
    });
    assert.ok(Date.now() - started < 10_000);
  });
});
