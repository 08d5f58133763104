// What every scenario stands on: a fresh seeded database, the service and the baseline as
// child processes, their memory, and a token.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { NewBook } from "../src/rules/book.js";
import { openStore } from "../src/store/open.js";
import { pgConnect } from "../test/support/pg.js";
import { numberedBooks, seedBooks } from "./catalogue.js";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const USERNAME = "bench";
export const PASSWORD = "bench-password";
const SECRET = randomBytes(32).toString("hex");
/** Where the databases and logs of a run go; run.ts removes it at the end. */
export const WORK = mkdtempSync(join(tmpdir(), "book-bench-"));

export type StoreKind = "sqlite" | "postgres";

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

// ---- databases ---------------------------------------------------------------------------

/** A fresh database of `books` books with ids 1..books (numbered ones unless given). */
export async function seededDatabase(
  kind: StoreKind,
  books: number,
  rows: Iterable<NewBook> = numberedBooks(books),
): Promise<{ dbUrl: string; drop(): Promise<void> }> {
  if (kind === "sqlite") {
    const path = join(WORK, `books-${randomBytes(4).toString("hex")}.db`);
    await (await openStore({ db: { kind: "sqlite", path }, pgPoolSize: 1 })).close();
    await seedBooks({ kind, path }, rows);
    return { dbUrl: `sqlite:${path}`, drop: async () => rmSync(path, { force: true }) };
  }
  const base = process.env.BENCH_DATABASE_URL as string;
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  const admin = await pgConnect(base);
  await admin.script(`CREATE SCHEMA ${schema}`);
  const url = new URL(base);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const dbUrl = url.toString();
  await (await openStore({ db: { kind: "postgres", url: dbUrl }, pgPoolSize: 1 })).close();
  await seedBooks({ kind, url: dbUrl }, rows);
  return {
    dbUrl,
    drop: async () => {
      await admin.script(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

// ---- processes ---------------------------------------------------------------------------

export interface Running {
  url: string;
  child: ChildProcess;
  /** Where its output goes. */
  logPath: string;
  stop(): Promise<void>;
}

/** Starts a process whose output goes to a file, and waits for its listening port. */
export async function startProcess(
  args: string[],
  env: Record<string, string>,
  portPattern: RegExp,
  cwd = ROOT,
  startMs = 30_000,
): Promise<Running> {
  const logPath = join(WORK, `log-${randomBytes(4).toString("hex")}.txt`);
  const log = openSync(logPath, "w");
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: "0", ...env },
    stdio: ["ignore", log, log],
  });
  const deadline = Date.now() + startMs;
  for (;;) {
    const port = portPattern.exec(readFileSync(logPath, "utf8"))?.[1];
    if (port) {
      return {
        url: `http://127.0.0.1:${port}`,
        child,
        logPath,
        stop: () =>
          new Promise((resolve) => {
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      // One that runs without saying where it listens is not left behind.
      child.kill("SIGKILL");
      throw new Error(`process did not start:\n${readFileSync(logPath, "utf8")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The service built in `root` (this tree, or another build beside it), started from `entry`,
 * listening within `startMs` (a migration of a large catalogue takes longer).
 */
export const startService = (
  dbUrl: string,
  workers = 1,
  env: Record<string, string> = {},
  { root = ROOT, entry = "dist/server/main.js", startMs = 30_000 } = {},
) =>
  startProcess(
    [entry],
    {
      ...env,
      NODE_ENV: "production",
      DB_URL: dbUrl,
      WORKERS: String(workers),
      // Passed through for experiments with the pool size.
      ...(process.env.PG_POOL_SIZE ? { PG_POOL_SIZE: process.env.PG_POOL_SIZE } : {}),
      SECRET_TOKEN: SECRET,
      AUTH_USERNAME: USERNAME,
      AUTH_PASSWORD: PASSWORD,
    },
    /Server listening at http:\/\/127\.0\.0\.1:(\d+)/,
    root,
    startMs,
  );

export async function startBaseline(sample: { status: number; contentType: string; body: string }) {
  const file = join(WORK, `sample-${randomBytes(4).toString("hex")}.json`);
  writeFileSync(file, JSON.stringify(sample));
  return startProcess(
    ["--import", "tsx", "bench/baseline.ts"],
    { SAMPLE_FILE: file },
    /listening (\d+)/,
  );
}

/** A process and its children (the workers, with WORKERS above 1). */
export function processTree(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  return [pid, ...(children ? children.split(" ").map(Number).flatMap(processTree) : [])];
}

/**
 * Resident memory of a process and its workers in MB; `VmHWM` is the sum of each one's
 * high-water mark since the last reset.
 */
export function rssMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  return processTree(pid).reduce((sum, one) => {
    const status = readFileSync(`/proc/${one}/status`, "utf8");
    return sum + Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) / 1024;
  }, 0);
}
/**
 * CPU time a process and its workers have used, in ms (user and system, from /proc; the
 * clock ticks at 100 Hz on Linux for these fields, whatever the kernel's own rate).
 */
export function cpuMs(pid: number): number {
  return processTree(pid).reduce((sum, one) => {
    // The fields after the command's name, which may hold spaces, start after its last ')'.
    const stat = readFileSync(`/proc/${one}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return sum + (Number(fields[11]) + Number(fields[12])) * 10;
  }, 0);
}

export function resetPeakRss(pid: number) {
  // Writing 5 to clear_refs resets VmHWM (Linux 4.0+).
  for (const one of processTree(pid)) writeFileSync(`/proc/${one}/clear_refs`, "5");
}

export async function login(url: string): Promise<string> {
  const response = await fetch(`${url}/token`, {
    method: "POST",
    body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
  });
  return ((await response.json()) as { data: { token: string } }).data.token;
}
