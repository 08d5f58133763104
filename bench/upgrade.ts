// `npm run bench -- --upgrade N`: a catalogue of N books at schema version 6, as the builds of
// 2026-11-23 left it, upgraded by this build's service at its start, on each store: how long
// until it serves, each migration's time, the progress lines an operator reads meanwhile and
// the longest silence between two lines, the service's peak memory, and on PostgreSQL the WAL
// written. Version 7 writes every book's search words and sort keys; on PostgreSQL version 8
// writes the words once more.
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { NewBook } from "../src/rules/book.js";
import { MIGRATIONS } from "../src/store/migrations.js";
import { migrateThrough, type PgConnection, pgConnect } from "../test/support/pg.js";
import { searchableBooks } from "./catalogue.js";
import { rssMb, type StoreKind, startService, WORK } from "./harness.js";

const FROM_VERSION = 6;
const PAGE = 10_000;
/** However large the catalogue, an upgrade that has not served within this has failed. */
const UPGRADE_LIMIT_MS = 4 * 3600_000;

export interface UpgradeResult {
  store: StoreKind;
  books: number;
  seconds: number;
  /** Each migration applied: its version, what it does, seconds since the start. */
  applied: { version: number; does: string; at: number }[];
  progressLines: number;
  longestSilenceSeconds: number;
  peakRssMb: number;
  walMb?: number;
}

function* pages(books: number): Generator<NewBook[]> {
  let page: NewBook[] = [];
  for (const book of searchableBooks(books)) {
    page.push(book);
    if (page.length === PAGE) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/** A SQLite catalogue at FROM_VERSION holding `books` books: its DB_URL. */
function oldSqlite(books: number): string {
  const path = join(WORK, `upgrade-${randomBytes(4).toString("hex")}.db`);
  const db = new DatabaseSync(path);
  db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT) STRICT");
  for (const step of MIGRATIONS.filter((m) => m.version <= FROM_VERSION)) {
    db.exec(step.sqlite);
    db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(step.version);
  }
  // Seeded fast (not measured): no journal, no fsync, its indexes' pages held in memory; then
  // in WAL mode, as the store left it.
  db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -4000000");
  const insert = db.prepare("INSERT INTO books (title, author, year) VALUES (?, ?, ?)");
  for (const page of pages(books)) {
    db.exec("BEGIN");
    for (const book of page) insert.run(book.title, book.author, book.year);
    db.exec("COMMIT");
  }
  db.exec("PRAGMA journal_mode = WAL");
  db.close();
  return `sqlite:${path}`;
}

/** A PostgreSQL schema at FROM_VERSION holding `books` books: its DB_URL. */
async function oldPostgres(admin: PgConnection, schema: string, books: number) {
  await admin.script(`CREATE SCHEMA ${schema}`);
  const url = new URL(process.env.BENCH_DATABASE_URL as string);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const db = await pgConnect(url.toString());
  try {
    await migrateThrough(db, FROM_VERSION);
    await db.sql`SET synchronous_commit = off`;
    for (const page of pages(books)) {
      await db.sql`INSERT INTO books (title, author, year)
        SELECT * FROM unnest(${page.map((b) => b.title)}::text[],
          ${page.map((b) => b.author)}::text[], ${page.map((b) => b.year)}::int[])`;
    }
    await db.sql`ANALYZE books`;
  } finally {
    await db.end();
  }
  return url.toString();
}

const walLsn = async (admin: PgConnection) =>
  (await admin.sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`)[0]?.lsn as string;

export async function measureUpgrade(stores: StoreKind[], books: number) {
  const results: UpgradeResult[] = [];
  for (const store of stores) {
    if (store === "sqlite") {
      const dbUrl = oldSqlite(books);
      try {
        results.push({ store, books, ...(await upgrade(dbUrl)) });
        console.log(formatUpgrade(results.at(-1) as UpgradeResult));
      } finally {
        const path = dbUrl.slice("sqlite:".length);
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
      }
      continue;
    }
    const admin = await pgConnect(process.env.BENCH_DATABASE_URL as string);
    const schema = `bench_${randomBytes(4).toString("hex")}`;
    try {
      const dbUrl = await oldPostgres(admin, schema, books);
      const before = await walLsn(admin);
      const measured = await upgrade(dbUrl);
      const [wal] = await admin.sql<{ bytes: string }>`
        SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${before}::pg_lsn) AS bytes`;
      results.push({ store, books, ...measured, walMb: Number(wal?.bytes) / 1e6 });
      console.log(formatUpgrade(results.at(-1) as UpgradeResult));
    } finally {
      await admin.script(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  }
  return results;
}

/** Starts the built service on the old catalogue and waits until it serves, then stops it. */
async function upgrade(dbUrl: string) {
  const started = Date.now();
  const service = await startService(
    dbUrl,
    1,
    { LOG_LEVEL: "info" },
    { startMs: UPGRADE_LIMIT_MS },
  );
  try {
    const seconds = (Date.now() - started) / 1000;
    // Its high-water mark since it started.
    const peakRssMb = rssMb(service.child.pid as number, "VmHWM");
    return { seconds, ...readLog(service.logPath, started), peakRssMb };
  } finally {
    await service.stop();
  }
}

const MIGRATION_LINES = ["migration applied", "migration progress", "migration running"];

/** The migrations applied and the lines while migrating of the service's log. */
function readLog(logPath: string, started: number) {
  const lines = readFileSync(logPath, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg: string; time: number; version: number; does: string })
    .filter((line) => MIGRATION_LINES.includes(line.msg));
  let silence = 0;
  let last = started;
  for (const line of lines) {
    silence = Math.max(silence, line.time - last);
    last = line.time;
  }
  return {
    applied: lines
      .filter((line) => line.msg === "migration applied")
      .map(({ version, does, time }) => ({ version, does, at: (time - started) / 1000 })),
    progressLines: lines.filter((line) => line.msg !== "migration applied").length,
    longestSilenceSeconds: silence / 1000,
  };
}

export function formatUpgrade(result: UpgradeResult): string {
  const wal = result.walMb === undefined ? "" : `, ${result.walMb.toFixed(0)} MB of WAL`;
  const slow = result.applied.filter((a, i) => a.at - (result.applied[i - 1]?.at ?? 0) >= 1);
  return [
    `${result.books.toLocaleString("en")} books on ${result.store}, version ${FROM_VERSION} to ` +
      `${MIGRATIONS.at(-1)?.version}: serving after ${result.seconds.toFixed(0)} s, peak ` +
      `${result.peakRssMb.toFixed(0)} MB${wal}; ${result.progressLines} progress lines, at most ` +
      `${result.longestSilenceSeconds.toFixed(1)} s apart`,
    ...slow.map((a) => `- version ${a.version} done at ${a.at.toFixed(0)} s: ${a.does}`),
  ].join("\n");
}
