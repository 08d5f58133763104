// Migrations on PostgreSQL take as long as the catalogue needs, not start-up's 10 s to reach
// the server: an instance that starts while another migrates a large catalogue waits for it,
// and a migration that never ends is still given up, with a message that says so. On both
// stores, start-up logs one line for each migration it applies, and none when there is none.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { indexWords, searchTerms, sortKey } from "../../src/rules/search.js";
import {
  MIGRATION_BATCH,
  type MigrationProgress,
  type MigrationTurn,
  takeTurns,
} from "../../src/store/applied-migrations.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { openStore } from "../../src/store/open.js";
import { MIGRATION_LOCK } from "../../src/store/postgres/schema.js";
import { openPostgresStore, STORE_OPEN_TIMEOUT_SECONDS } from "../../src/store/postgres/store.js";
import { StoreOpenError } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { freshPostgresDatabase, storesUnderTest } from "../support/helpers.js";
import { migrateThrough, type PgConnection, pgConnect } from "../support/pg.js";
import { freePort, spawnNpmStart, startService } from "../support/service.js";

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

describe("start-up's lines while it migrates", () => {
  // A step that builds an index says nothing for as long as the build takes; one that writes
  // every book says where it is at the interval. Here the interval is 300 ms: a silent turn of
  // 1.5 s (the index), then turns of 60 ms, one of them 1.2 s long (a batch that waits).
  test("come an interval apart, through a silent step and through a long batch", async () => {
    const interval = 300;
    const lines: { at: number; msg: string }[] = [];
    const say = (msg: string) => () => lines.push({ at: Date.now(), msg });
    const log = { applied: say("applied"), progress: say("progress"), running: say("running") };
    const started = Date.now();
    let turns = 0;
    const next = async (): Promise<MigrationTurn> => {
      turns += 1;
      await sleep(turns === 1 ? 1_500 : turns === 20 ? 1_200 : 60);
      if (turns === 40) return { applied: [{ version: 2, does: "writes every book" }] };
      return { applied: [], deriving: { version: 2, through: turns * MIGRATION_BATCH } };
    };
    const count = async () => ({ of: 39 * MIGRATION_BATCH, done: MIGRATION_BATCH });
    await takeTurns(next, count, log, () => true, interval);
    const kinds = lines.map((line) => line.msg);
    assert.ok(
      kinds.filter((kind) => kind === "running").length >= 3,
      `lines while the index is built: ${kinds.join(", ")}`,
    );
    assert.ok(kinds.filter((kind) => kind === "progress").length >= 6, kinds.join(", "));
    assert.equal(kinds.at(-1), "applied");
    const gaps = lines.map((line, i) => line.at - (lines[i - 1]?.at ?? started));
    // An interval, with room for a busy machine's late timers; none near the silent 1.5 s.
    assert.ok(Math.max(...gaps) < 1_000, `gaps: ${gaps.join(", ")} ms`);
  });
});

/** Polls `check` every 100 ms until it holds, for at most `ms`. */
async function until(what: string, ms: number, check: () => boolean | Promise<boolean>) {
  for (const deadline = Date.now() + ms; !(await check()); await sleep(100)) {
    assert.ok(Date.now() < deadline, `no ${what} within ${ms} ms`);
  }
}

const progressLines = (output: string) =>
  output
    .split("\n")
    .filter((line) => line.includes('"msg":"migration progress"'))
    .map((line) => JSON.parse(line) as { version: number; done: number; of: number });

describe("a migration that writes every book, on PostgreSQL", { skip: postgresSkip }, () => {
  // Version 8 writes every book's words again. 3 batches of books, each statement made to take
  // 0.25 s by a trigger of the test's: a batch takes 2.5 s, long enough to be killed in. (That a
  // line comes at least once an interval, through a silent wait too, is the test above's.)
  const books = 3 * MIGRATION_BATCH;
  const catalogue = async () => {
    const database = await freshPostgresDatabase();
    const db = await pgConnect(database.url);
    await migrateThrough(db, 7);
    await db.script(`
      INSERT INTO books (title, author, year)
        SELECT 'Volume ' || i, 'Scribe ' || (i % 97), 1500 + i % 500 FROM generate_series(1, ${books}) i;
      CREATE FUNCTION slowly() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(0.25); RETURN NULL; END $$;
      CREATE TRIGGER slowly AFTER UPDATE ON books FOR EACH STATEMENT EXECUTE FUNCTION slowly();`);
    return { database, db };
  };
  const fingerprint = async (db: PgConnection) =>
    (
      await db.sql<{
        md5: string;
      }>`SELECT md5(string_agg(id || title || author || year, ',' ORDER BY id)) FROM books`
    )[0]?.md5;

  test("logs its progress, answers /health and 503 meanwhile (waiting on a lock too), and after a kill -9 carries on", async () => {
    const { database, db } = await catalogue();
    const before = await fingerprint(db);
    const port = await freePort();
    const env = {
      HOST: "127.0.0.1",
      PORT: String(port),
      DB_URL: database.url,
      SECRET_TOKEN: "migration-progress-secret-of-at-least-32-bytes",
      AUTH_USERNAME: "librarian",
      AUTH_PASSWORD: "migration-progress-password",
      LOG_LEVEL: "info",
    };
    const url = `http://127.0.0.1:${port}`;
    const get = async (path: string) => {
      const response = await fetch(`${url}${path}`);
      return { status: response.status, body: (await response.json()) as { message: string } };
    };
    const through = async () =>
      Number(
        (await db.sql<{ n: string }>`SELECT derived_through AS n FROM schema_migration_progress`)[0]
          ?.n ?? 0,
      );
    const started: ReturnType<typeof spawnNpmStart>[] = [];
    try {
      // Another session's lock holds the first batch: the service answers all the same.
      const holder = await pgConnect(database.url);
      await holder.script("BEGIN; LOCK TABLE books IN SHARE MODE");
      const first = spawnNpmStart(env, { direct: true });
      started.push(first);
      try {
        await until("a wait on the lock", 15_000, async () => {
          const [waiting] = await db.sql<{ n: string }>`
            SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`;
          return Number(waiting?.n) > 0;
        });
        assert.equal((await get("/health")).status, 200);
        assert.equal((await get("/ready")).status, 503);
        assert.equal(progressLines(first.output()).length, 0, "a batch written under the lock");
      } finally {
        await holder.end();
      }
      await until("progress line", 10_000, () => progressLines(first.output()).length > 0);
      assert.deepEqual(progressLines(first.output())[0], {
        ...progressLines(first.output())[0],
        version: 8,
        done: MIGRATION_BATCH,
        of: books,
      });
      const health = await get("/health");
      assert.equal(health.status, 200);
      assert.equal(health.body.message, "OK");
      assert.deepEqual(await get("/ready"), {
        status: 503,
        body: { status: 503, message: "Service unavailable", data: null },
      });
      assert.equal((await get("/books")).status, 503);
      // Killed once a batch has committed: the next start carries on after it.
      await until("batch committed", 10_000, async () => (await through()) > 0);
      first.child.kill("SIGKILL");
      await first.exited;
      const done = await through();
      assert.ok(done < books, `all ${books} written before the kill`);

      const second = spawnNpmStart(env, { direct: true });
      started.push(second);
      await until("service", 30_000, () => second.output().includes("Server listening at"));
      // Its first batch the one after those written: none written again.
      const [line] = progressLines(second.output());
      assert.equal(line?.done, Math.min(books, done + MIGRATION_BATCH), JSON.stringify(line));
      assert.equal((await get("/ready")).status, 200);
      assert.equal(await fingerprint(db), before, "a book changed");
      const [unwritten] = await db.sql<{ n: string }>`
        SELECT count(*) AS n FROM books WHERE title_words = ''::tsvector`;
      assert.equal(Number(unwritten?.n), 0);
      second.child.kill("SIGTERM");
      assert.equal(await second.exited, 0);
    } catch (error) {
      for (const { output } of started) console.error(output());
      throw error;
    } finally {
      for (const { child } of started) child.kill("SIGKILL");
      await db.end();
      await database.drop();
    }
  });
});

describe("a migration that writes every book, on SQLite", () => {
  test("is written a batch a transaction: a start after it stopped carries on, every book intact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-migration-batches-"));
    const path = join(dir, "books.db");
    const books = 2 * MIGRATION_BATCH + 500;
    try {
      // A catalogue as a build of version 6 left it: version 7 writes every book's keys and words.
      const old = new DatabaseSync(path);
      old.exec(
        `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT) STRICT`,
      );
      for (const step of MIGRATIONS.filter((m) => m.version <= 6)) {
        old.exec(step.sqlite);
        old.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
      }
      old.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${books})
        INSERT INTO books (title, author, year) SELECT 'Volume ' || i, 'Scribe ' || (i % 97), 1500 + i % 500 FROM n`);
      const fingerprint = () =>
        old.prepare("SELECT group_concat(id || title || author || year) AS f FROM books").get()?.f;
      const before = fingerprint();
      // The first start stops at its first progress line, a batch written and committed.
      const told: MigrationProgress[] = [];
      const stopping = {
        applied: () => {},
        progress: (progress: MigrationProgress) => {
          told.push(progress);
          throw new Error("stopped");
        },
        running: () => {},
      };
      const db = { kind: "sqlite", path } as const;
      await assert.rejects(openStore({ db, pgPoolSize: 1 }, stopping), /stopped/);
      assert.deepEqual(
        [...told],
        [{ version: 7, done: MIGRATION_BATCH, of: books, secondsLeft: null }],
      );
      const applied: number[] = [];
      const log = {
        applied: (a: { version: number }) => applied.push(a.version),
        progress: (p: MigrationProgress) => told.push(p),
        running: () => {},
      };
      const store = await openStore({ db, pgPoolSize: 1 }, log);
      assert.equal(told[1]?.done, 2 * MIGRATION_BATCH, "carried on after the batch committed");
      assert.deepEqual(
        applied,
        MIGRATIONS.filter((m) => m.version >= 7).map((m) => m.version),
      );
      assert.equal(fingerprint(), before);
      const found = await store.list({
        after: 0,
        limit: 5,
        search: searchTerms("volume 20499") ?? [],
      });
      assert.equal(found.count, 1);
      const last = await store.list({ after: 0, limit: 1, sort: "title", descending: true });
      assert.match(last.json, /"Volume 9999"/);
      await store.close();
      old.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A SQLite catalogue at `path` as a build of version 14 left it: its search words without
 * the single characters of runs written without spaces (version 15).
 */
function sqliteAtVersion14(path: string, books: { title: string; author: string }[]) {
  const old = new DatabaseSync(path);
  old.exec("PRAGMA journal_mode = WAL");
  old.exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT) STRICT`);
  for (const step of MIGRATIONS.filter((m) => m.version <= 14)) {
    old.exec(step.sqlite);
    old.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
  }
  const insert = old.prepare(
    "INSERT INTO books (title, author, year, title_key, author_key) VALUES (?, ?, 2001, ?, ?)",
  );
  const index = old.prepare("INSERT INTO books_search (rowid, words) VALUES (?, ?)");
  index.setReadBigInts(true);
  for (const [i, { title, author }] of books.entries()) {
    insert.run(title, author, sortKey(title), sortKey(author));
    index.run(i + 1, [...new Set([...indexWords(title), ...indexWords(author)])].join(" "));
  }
  old.close();
}

describe("a migration on SQLite", () => {
  test("version 15: a catalogue indexed before it finds a book by one character from inside a run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-migration-15-"));
    const path = join(dir, "books.db");
    try {
      sqliteAtVersion14(path, [
        { title: "海辺のカフカ", author: "村上春樹" },
        { title: "Kafka on the Shore", author: "Haruki Murakami" },
        { title: "ノルウェイの森", author: "村上春樹" },
      ]);
      const applied: { version: number; does: string }[] = [];
      const log = {
        applied: (a: (typeof applied)[0]) => applied.push(a),
        progress() {},
        running() {},
      };
      const store = await openStore({ db: { kind: "sqlite", path }, pgPoolSize: 1 }, log);
      assert.deepEqual(applied, [
        { version: 15, does: "writes the search words of every book written without spaces" },
      ]);
      const titles = async (q: string) =>
        JSON.parse(
          `[${(await store.list({ after: 0, limit: 10, search: searchTerms(q) })).json}]`,
        ).map((book: { title: string }) => book.title);
      assert.deepEqual(await titles("の"), ["海辺のカフカ", "ノルウェイの森"]);
      assert.deepEqual(await titles("上"), ["海辺のカフカ", "ノルウェイの森"]);
      assert.deepEqual(await titles("カフカ"), ["海辺のカフカ"]);
      assert.deepEqual(await titles("kafka shore"), ["Kafka on the Shore"]);
      assert.equal(await store.count({ search: searchTerms("辺") }), 1);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("another connection's lock: a migration waits for it off the event loop, a current schema not at all", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-migration-lock-"));
    const path = join(dir, "books.db");
    sqliteAtVersion14(path, [{ title: "三体", author: "刘慈欣" }]);
    // An operator's shell holding the write lock for a while, within the 5 s a start waits.
    const holder = new DatabaseSync(path);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const start = () =>
      spawnNpmStart(
        {
          HOST: "127.0.0.1",
          PORT: String(port),
          DB_URL: `sqlite:${path}`,
          SECRET_TOKEN: "migration-lock-secret-of-at-least-32-bytes",
          AUTH_USERNAME: "librarian",
          AUTH_PASSWORD: "migration-lock-password",
        },
        { direct: true },
      );
    const status = (route: string) =>
      fetch(`${url}${route}`, { signal: AbortSignal.timeout(1_000) }).then(
        (response) => response.status,
        (error: Error) => error.name,
      );
    const services: ReturnType<typeof spawnNpmStart>[] = [];
    try {
      holder.exec("BEGIN IMMEDIATE");
      services.push(start());
      await until("/health", 10_000, async () => (await status("/health")) === 200);
      const answers = new Set<string>();
      for (const until = Date.now() + 2_000; Date.now() < until; await sleep(100)) {
        answers.add(`${await status("/health")} ${await status("/ready")}`);
      }
      holder.exec("ROLLBACK");
      assert.deepEqual([...answers], ["200 503"], "/health and /ready while the lock was held");
      await until("ready", 10_000, async () => (await status("/ready")) === 200);
      assert.match(services[0]?.output() ?? "", /"version":15,"does":"writes the search words/);
      services[0]?.child.kill("SIGTERM");
      assert.equal(await services[0]?.exited, 0);
      // Started again on the current schema while the lock is held: it needs no write to start.
      holder.exec("BEGIN IMMEDIATE");
      services.push(start());
      await until("ready under the lock", 10_000, async () => (await status("/ready")) === 200);
      assert.equal(await status("/health"), 200);
      holder.exec("ROLLBACK");
    } catch (error) {
      for (const service of services) console.error(service.output());
      throw error;
    } finally {
      if (holder.isTransaction) holder.exec("ROLLBACK");
      holder.close();
      for (const service of services) service.child.kill("SIGTERM");
      await Promise.all(services.map((service) => service.exited));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
