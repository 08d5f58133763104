// A write that answers 503 because PostgreSQL held it past DB_TIMEOUT_SECONDS is never
// applied later: PostgreSQL itself ends the statement, and no backend is left waiting, directly
// and through a pgbouncer in transaction mode.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import type { Book } from "../../src/rules/book.js";
import { openPostgresStore } from "../../src/store/postgres/store.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  call,
  freshPostgresDatabase,
  storesUnderTest,
  tokenFor,
} from "../support/helpers.js";
import { pgConnect } from "../support/pg.js";
import { pgbouncerSkipReason, startPgbouncer } from "../support/pgbouncer.js";

const postgres = (await storesUnderTest()).find((k) => k.name === "postgres");
const TIMEOUT_MS = 1_000;

/** The database's backends, other than `own`, that wait for a lock. */
async function waitingBackends(url: string, database: string): Promise<number> {
  const admin = await pgConnect(url);
  const [row] = await admin.sql<{ n: number }>`SELECT count(*)::integer AS n
    FROM pg_stat_activity WHERE datname = ${database} AND wait_event_type = 'Lock'`;
  await admin.end();
  return row?.n ?? -1;
}

/**
 * Creates, updates and deletes sent while another connection holds the books table locked for
 * longer than the store's bound: each answers 503; none is applied once the lock ends, and no
 * backend is left waiting for it.
 */
async function writesHeldByALock(
  storeUrl: string,
  database: { name: string; url: string },
  preparedStatements: boolean,
) {
  const store = await openPostgresStore(storeUrl, {
    poolSize: 4,
    timeoutMs: TIMEOUT_MS,
    preparedStatements,
    description: "test",
  });
  const app: App = await buildTestApp({ store });
  const locker = await pgConnect(database.url);
  try {
    const token = await tokenFor(app);
    const kept: Book[] = [];
    for (const title of ["Kept", "Changed?", "Deleted?"]) {
      const created = await call<Book>(app, "POST", "/book", {
        token,
        body: { title, author: "A", year: 1 },
      });
      assert.equal(created.status, 201);
      kept.push(created.body.data as Book);
    }
    const [, changed, deleted] = kept as [Book, Book, Book];
    await locker.script("BEGIN; LOCK TABLE books IN ACCESS EXCLUSIVE MODE");
    const started = Date.now();
    const answers = await Promise.all([
      call(app, "POST", "/book", { token, body: { title: "Never", author: "A", year: 2 } }),
      call(app, "POST", "/book", { token, body: { title: "Never", author: "B", year: 3 } }),
      call(app, "PUT", `/book/${changed.id}`, { token, body: { year: 1999 } }),
      call(app, "DELETE", `/book/${deleted.id}`, { token }),
    ]);
    for (const [i, answer] of answers.entries()) {
      assert.equal(answer.status, 503, `request ${i}: ${answer.raw}`);
      assert.equal(answer.body.message, Messages.serviceUnavailable);
    }
    const took = Date.now() - started;
    assert.ok(took < 4 * TIMEOUT_MS, `the 503s took ${took} ms`);
    // The writes' statements were ended in PostgreSQL: none of them still waits for the lock.
    assert.equal(await waitingBackends(database.url, database.name), 0, "backends still waiting");
    // Held past the bound, as a lock may be for much longer; then released.
    await new Promise((done) => setTimeout(done, TIMEOUT_MS));
    await locker.script("COMMIT");
    await new Promise((done) => setTimeout(done, 500));
    const stored = await locker.sql<Book>`SELECT id, title, author, year FROM books ORDER BY id`;
    assert.deepEqual(stored, kept, "a write answered 503 was applied");
    // The store serves again at once.
    const again = await call(app, "POST", "/book", {
      token,
      body: { title: "After", author: "A", year: 4 },
    });
    assert.equal(again.status, 201);
  } finally {
    await locker.script("ROLLBACK").catch(() => {});
    await locker.end();
    await app.close();
    await store.close();
  }
}

describe("writes held past DB_TIMEOUT_SECONDS by a lock", { skip: postgres?.skip }, () => {
  test("directly: each answers 503, none is applied after, no backend waits", async () => {
    const database = await freshPostgresDatabase();
    try {
      await writesHeldByALock(database.url, database, true);
    } finally {
      await database.drop();
    }
  });

  test("through pgbouncer in transaction mode: each answers 503, none is applied after, no backend waits", {
    skip: postgres?.skip || pgbouncerSkipReason(),
  }, async () => {
    const pgbouncer = await startPgbouncer({ poolMode: "transaction" });
    const database = await freshPostgresDatabase();
    try {
      await writesHeldByALock(pgbouncer.url(database.name), database, false);
    } finally {
      await pgbouncer.stop();
      await database.drop();
    }
  });
});
