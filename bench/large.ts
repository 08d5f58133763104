// `npm run bench -- --books N`: a catalogue of N books on each store, seeded by restoring a
// generated backup (minutes at 10^7, where creates would take hours), then every screen's
// request against it: reads by id, each kind of search, the listing's first byte, deep pages,
// an exact count; and the commands an operator runs on it, timed with their peak memory.
import { readdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { pgConnect } from "../test/support/pg.js";
import { type CommandRun, runCli } from "./backup.js";
import { SEARCHES, searchableBooks, writeGeneratedBackup } from "./catalogue.js";
import { login, median, type StoreKind, seededDatabase, startService, WORK } from "./harness.js";
import { formatPage, measurePage, type PageTimes } from "./large-page.js";
import { type LoadResult, runLoad } from "./load.js";

/** Requests of each kind of search, one after another: their slowest is the p99 of so few. */
const SEARCH_REQUESTS = 40;

export interface LargeResult {
  store: StoreKind;
  books: number;
  restore: CommandRun;
  backup: CommandRun;
  check: CommandRun;
  /** The catalogue's bytes on disk for each million books. */
  diskMbPerMillion: number;
  reads: LoadResult;
  /**
   * Milliseconds of each request, by what it asks: the first (its pages may not be in memory
   * yet), then the median and the slowest of the others.
   */
  requests: {
    name: string;
    status: number;
    firstMs: number;
    medianMs: number;
    slowestMs: number;
  }[];
  page: PageTimes;
}

/** Every scenario at `books` books on each store, one generated backup for all. */
export async function measureLarge(
  stores: StoreKind[],
  books: number,
  generator: "wrk" | "autocannon",
): Promise<LargeResult[]> {
  const file = join(WORK, "generated.backup");
  const started = performance.now();
  await writeGeneratedBackup(file, books, searchableBooks(books));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`a backup of ${books.toLocaleString("en")} generated books written in ${seconds} s`);
  const results: LargeResult[] = [];
  try {
    for (const store of stores) results.push(await measureStore(store, books, file, generator));
  } finally {
    rmSync(file, { force: true });
  }
  return results;
}

async function measureStore(
  store: StoreKind,
  books: number,
  file: string,
  generator: "wrk" | "autocannon",
): Promise<LargeResult> {
  const target = await seededDatabase(store, 0, []);
  const again = join(WORK, `again-${store}.backup`);
  try {
    const restore = await runCli(["restore", file, "--db", target.dbUrl]);
    const diskMbPerMillion = (await bytesOnDisk(store, target.dbUrl)) / (books / 1e6);
    const backup = await runCli(["backup", again, "--db", target.dbUrl]);
    const check = await runCli(["backup", "--check", again]);
    const service = await startService(target.dbUrl);
    try {
      const served = await measureServed(service.url, books, generator);
      const result = { store, books, restore, backup, check, diskMbPerMillion, ...served };
      console.log(formatLarge(result));
      return result;
    } finally {
      await service.stop();
    }
  } finally {
    rmSync(again, { force: true });
    await target.drop();
  }
}

/** What a client and a librarian see of the catalogue served at `url`. */
async function measureServed(url: string, books: number, generator: "wrk" | "autocannon") {
  const token = await login(url);
  const traffic = { kind: "get-random", readIds: books } as const;
  const reads = await runLoad({ url, token, connections: 50, seconds: 5, traffic }, generator);
  const requests = await timeRequests(url, token, books);
  return { reads, requests, page: await measurePage(url) };
}

/** The database's files (SQLite) or the schema's relations (PostgreSQL), in MB. */
async function bytesOnDisk(store: StoreKind, dbUrl: string): Promise<number> {
  if (store === "sqlite") {
    // The database's file, and its -wal and -shm beside it.
    const path = dbUrl.slice("sqlite:".length);
    return readdirSync(dirname(path))
      .filter((entry) => entry.startsWith(basename(path)))
      .reduce((sum, entry) => sum + statSync(join(dirname(path), entry)).size / 1e6, 0);
  }
  const db = await pgConnect(dbUrl);
  try {
    const [row] = await db.sql<{ bytes: number }>`SELECT sum(pg_total_relation_size(c.oid))::bigint
      AS bytes FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace
      AND c.relkind IN ('r', 'm')`;
    return Number(row?.bytes ?? 0) / 1e6;
  } finally {
    await db.end();
  }
}

/** Each screen's request, SEARCH_REQUESTS times in turn: their status and times. */
async function timeRequests(url: string, token: string, books: number) {
  const common = SEARCHES["a common word"][0] as string;
  const asks: [string, (i: number) => string, Record<string, string>?][] = [
    ...Object.entries(SEARCHES).map(([kind, queries]): [string, (i: number) => string] => [
      `search, ${kind}`,
      (i) => `/books?q=${encodeURIComponent(queries[i % queries.length] as string)}&limit=20`,
    ]),
    ["the first page", () => "/books?limit=20"],
    ["the last page by id (after)", () => `/books?limit=20&after=${books - 20}`],
    ["the last page by title", () => "/books?limit=20&sort=-title"],
    ["a common word, counted", () => `/books?q=${common}&limit=20`, { prefer: "count=exact" }],
  ];
  const results: LargeResult["requests"] = [];
  for (const [name, path, headers = {}] of asks) {
    const times: number[] = [];
    let status = 0;
    for (let i = 0; i < SEARCH_REQUESTS; i++) {
      const started = performance.now();
      const response = await fetch(`${url}${path(i)}`, {
        headers: { authorization: token, ...headers },
      });
      await response.arrayBuffer();
      times.push(performance.now() - started);
      status = response.status;
    }
    const [firstMs = 0, ...others] = times;
    results.push({
      name,
      status,
      firstMs,
      medianMs: median(others),
      slowestMs: Math.max(...others),
    });
  }
  results.push({
    name: "the whole listing's first byte",
    status: 200,
    ...(await firstByte(url, token)),
  });
  return results;
}

/** GET /books, every book streamed: ms to its first byte (the rest is not read). */
async function firstByte(url: string, token: string) {
  const started = performance.now();
  const controller = new AbortController();
  const response = await fetch(`${url}/books`, {
    headers: { authorization: token },
    signal: controller.signal,
  });
  const reader = response.body?.getReader();
  await reader?.read();
  const ms = performance.now() - started;
  controller.abort();
  return { firstMs: ms, medianMs: ms, slowestMs: ms };
}

const run = (name: string, command: CommandRun) =>
  `${name} ${command.seconds.toFixed(1)} s, ${command.peakRssMb.toFixed(0)} MB`;

export function formatLarge(result: LargeResult): string {
  const lines = [
    `${result.books.toLocaleString("en")} books on ${result.store}: ${run("restore", result.restore)}; ` +
      `${run("backup", result.backup)}; ${run("check", result.check)}; ` +
      `${result.diskMbPerMillion.toFixed(0)} MB on disk a million books`,
    `GET /book/{id} at random, 50 connections: ${Math.round(result.reads.rps).toLocaleString("en")} req/s, ` +
      `p99 ${result.reads.p99Ms.toFixed(1)} ms, ${result.reads.non2xx + result.reads.errors} not 2xx`,
    `| request | status | first ms | median ms | slowest ms, of ${SEARCH_REQUESTS - 1} after it |`,
    "|---|---:|---:|---:|---:|",
    ...result.requests.map(
      (r) =>
        `| ${r.name} | ${r.status} | ${r.firstMs.toFixed(1)} | ${r.medianMs.toFixed(1)} | ${r.slowestMs.toFixed(1)} |`,
    ),
    "",
    formatPage(result.page),
  ];
  return lines.join("\n");
}
