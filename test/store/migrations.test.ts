// Migrations on PostgreSQL take as long as the catalogue needs, not start-up's 10 s to reach
// the server: an instance that starts while another migrates a large catalogue waits for it,
// and a migration that never ends is still given up, with a message that says so. On both
// stores, start-up logs one line for each migration it applies, and none when there is none.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { MIGRATION_LOCK } from "../../src/store/postgres/schema.js";
import { openPostgresStore, STORE_OPEN_TIMEOUT_SECONDS } from "../../src/store/postgres/store.js";
import { StoreOpenError } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { freshPostgresDatabase, storesUnderTest } from "../support/helpers.js";
import { type PgConnection, pgConnect } from "../support/pg.js";
import { startService } from "../support/service.js";

const kinds = await storesUnderTest();
const postgresSkip = kinds.find((k) => k.name === "postgres")?.skip ?? "no PostgreSQL";

/** A database of its own whose migration lock another session holds, as a migrating instance. */
async function lockedDatabase() {
  const database = await freshPostgresDatabase();
  const holder: PgConnection = await pgConnect(database.url);
  await holder.sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`;
  return {
    url: database.url,
    release: () => holder.sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`,
    drop: async () => {
      await holder.end();
      await database.drop();
    },
  };
}

const options = (url: string) => ({
  poolSize: 1,
  timeoutMs: 5_000,
  preparedStatements: true,
  description: new URL(url).host,
});

describe("PostgreSQL migrations at start-up", { skip: postgresSkip }, () => {
  test("an instance waits for another's migration past start-up's bound, then serves", async () => {
    const database = await lockedDatabase();
    const holdMs = STORE_OPEN_TIMEOUT_SECONDS * 1000 + 1_500;
    const released = new Promise((resolve) => setTimeout(resolve, holdMs)).then(database.release);
    try {
      const started = Date.now();
      const store = await openPostgresStore(database.url, options(database.url));
      assert.ok(Date.now() - started >= holdMs - 100, "opened before the lock was released");
      const book = await store.create({ title: "Dune", author: "Frank Herbert", year: 1965 });
      assert.deepEqual(await store.get(book.id), book);
      await store.close();
    } finally {
      await released;
      await database.drop();
    }
  });

  test("a migration that does not end within its bound is given up, saying so", async () => {
    const database = await lockedDatabase();
    try {
      const started = Date.now();
      await assert.rejects(
        openPostgresStore(database.url, { ...options(database.url), migrationTimeoutMs: 1_500 }),
        (error: Error) => {
          assert.ok(error instanceof StoreOpenError);
          assert.match(
            error.message,
            /^cannot prepare the PostgreSQL schema at 127\.0\.0\.1:\d+: the migrations did not end within 1\.5 s \(another instance migrating it/,
          );
          return true;
        },
      );
      assert.ok(Date.now() - started < 8_000, `took ${Date.now() - started} ms`);
      // Nothing was left half done: once the lock is free, the next start migrates and serves.
      await database.release();
      const store = await openPostgresStore(database.url, options(database.url));
      assert.equal(await store.count({}), 0);
      await store.close();
    } finally {
      await database.drop();
    }
  });
});

/** The "migration applied" lines of a start-up of the service on `dbUrl`, once it listens. */
async function migrationLines(dbUrl: string) {
  const service = await startService(
    {
      HOST: "127.0.0.1",
      PORT: "0",
      DB_URL: dbUrl,
      SECRET_TOKEN: "migration-log-secret-of-at-least-32-bytes",
      AUTH_USERNAME: "librarian",
      AUTH_PASSWORD: "migration-log-password",
      LOG_LEVEL: "info",
    },
    { direct: true },
  );
  assert.equal(await service.stop(), 0);
  return service
    .output()
    .split("\n")
    .filter((line) => line.includes('"msg":"migration applied"'))
    .map((line) => JSON.parse(line) as { level: number; version: number; does: string });
}

describe("each migration applied at start-up is one log line", () => {
  const check = async (dbUrl: string, engine: string) => {
    const first = await migrationLines(dbUrl);
    assert.deepEqual(
      first.map((line) => [line.level, line.version]),
      MIGRATIONS.map((m) => [30, m.version]),
    );
    assert.match(first[0]?.does ?? "", /^create table books\b/, engine);
    assert.match(first.find((line) => line.version === 4)?.does ?? "", /search words/, engine);
    for (const line of first) assert.ok(line.does.length > 0, `version ${line.version}: ${engine}`);
    assert.deepEqual(await migrationLines(dbUrl), [], "a current schema logs none");
  };

  test("SQLite: every step on a new file, with what it does; none on the next start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-migration-log-"));
    try {
      await check(`sqlite:${join(dir, "books.db")}`, "sqlite");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("PostgreSQL: every step on a new database; none on the next start", {
    skip: postgresSkip,
  }, async () => {
    const database = await freshPostgresDatabase();
    try {
      await check(database.url, "postgres");
    } finally {
      await database.drop();
    }
  });
});
