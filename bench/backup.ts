// The backup scenarios: `book-catalogue backup`, `backup --check` and `restore` of a large
// catalogue, each a child process timed with its peak memory; then GET /book/{id} through the
// service, in windows alternating without and with a backup of the same catalogue running.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { pgConnect } from "../test/support/pg.js";
import {
  login,
  median,
  ROOT,
  type StoreKind,
  seededDatabase,
  startService,
  WORK,
} from "./harness.js";
import { type LoadResult, runLoad } from "./load.js";

/** The scenarios' names, for `--only`: both contain "backup". */
export const BACKUP_SCENARIOS = {
  timings: "backup: backup, check and restore",
  reads: "backup: reads by id while a backup runs",
} as const;

export interface BackupOptions {
  quick: boolean;
  selected(name: string): boolean;
  generator: "wrk" | "autocannon";
  connections: number;
}

/** One run of the command line: its wall time, from spawn to exit, and its peak RSS. */
export interface CommandRun {
  seconds: number;
  peakRssMb: number;
}

export interface BackupTimings {
  store: StoreKind;
  books: number;
  fileMb: number;
  backup: CommandRun;
  check: CommandRun;
  restore: CommandRun;
}

export interface ReadsDuringBackup {
  store: StoreKind;
  books: number;
  windowSeconds: number;
  /** Medians over the rounds; the ratio is the median of each round's with / without. */
  rpsWithout: number;
  rpsWith: number;
  ratio: number;
  p99MsWithout: number;
  p99MsWith: number;
  /** Backups that ran during the windows, and the median time each took under the load. */
  backups: number;
  backupSecondsUnderLoad: number;
  non2xx: number;
  /** Each round's windows, in the order they ran. */
  rounds: { without: LoadResult; with: LoadResult }[];
}

export interface BackupResults {
  books: number;
  timings: BackupTimings[];
  reads: ReadsDuringBackup[];
}

const CLI = join(ROOT, "dist", "cli", "main.js");
/** No command of these scenarios runs anywhere near this long on a working build. */
const COMMAND_TIMEOUT_MS = 600_000;

/** Both scenarios on each store, over one seeded catalogue per store. */
export async function measureBackups(
  stores: StoreKind[],
  options: BackupOptions,
): Promise<BackupResults> {
  const books = options.quick ? 200_000 : 1_000_000;
  const results: BackupResults = { books, timings: [], reads: [] };
  const timings = options.selected(BACKUP_SCENARIOS.timings);
  const reads = options.selected(BACKUP_SCENARIOS.reads);
  if (!timings && !reads) return results;
  for (const store of stores) {
    const source = await seededDatabase(store, books);
    try {
      if (timings) results.timings.push(await timeBackupAndRestore(store, source.dbUrl, books));
      if (reads) results.reads.push(await readsDuringBackups(store, source.dbUrl, books, options));
    } finally {
      await source.drop();
    }
  }
  return results;
}

// ---- backup, check, restore ----------------------------------------------------------------

async function timeBackupAndRestore(
  store: StoreKind,
  dbUrl: string,
  books: number,
): Promise<BackupTimings> {
  const file = join(WORK, `books-${store}.backup`);
  const target = await seededDatabase(store, 0, []);
  try {
    const backup = await runCli(["backup", file, "--db", dbUrl]);
    const fileMb = statSync(file).size / 1e6;
    const check = await runCli(["backup", "--check", file]);
    if (!check.output.includes(`a complete backup of ${books} books`)) {
      throw new Error(`backup --check did not find ${books} books:\n${check.output}`);
    }
    const restore = await runCli(["restore", file, "--db", target.dbUrl]);
    // A restore that lost or changed books would make its timing worthless.
    const [source, restored] = [await summary(store, dbUrl), await summary(store, target.dbUrl)];
    if (restored !== source || !source.startsWith(`${books} books`)) {
      throw new Error(`the restore holds ${restored}; its source holds ${source}`);
    }
    const row = {
      store,
      books,
      fileMb,
      backup: only(backup),
      check: only(check),
      restore: only(restore),
    };
    console.log(
      `${books.toLocaleString("en")} books on ${store}: backup ${formatRun(backup)}, check ${formatRun(check)}, ` +
        `restore ${formatRun(restore)}; ${fileMb.toFixed(1)} MB; restored: ${restored}`,
    );
    return row;
  } finally {
    await target.drop();
    rmSync(file, { force: true });
  }
}

/** A run's figures without its output, which names temporary files. */
const only = ({ seconds, peakRssMb }: CommandRun): CommandRun => ({ seconds, peakRssMb });

const formatRun = (run: CommandRun) =>
  `${run.seconds.toFixed(1)} s (peak RSS ${run.peakRssMb.toFixed(0)} MB)`;

/** The catalogue's count, last id and sum of years: equal after a restore that kept every book. */
async function summary(store: StoreKind, dbUrl: string): Promise<string> {
  const query = "SELECT count(*) AS n, max(id) AS last, sum(year) AS years FROM books";
  let row: { n: unknown; last: unknown; years: unknown } | undefined;
  if (store === "sqlite") {
    const db = new DatabaseSync(dbUrl.slice("sqlite:".length), { readOnly: true });
    row = db.prepare(query).get() as typeof row;
    db.close();
  } else {
    const db = await pgConnect(dbUrl);
    [row] = await db.sql<NonNullable<typeof row>>`SELECT count(*) AS n, max(id) AS last,
      sum(year) AS years FROM books`;
    await db.end();
  }
  return `${Number(row?.n)} books, last id ${Number(row?.last)}, years ${Number(row?.years)}`;
}

/**
 * Runs `book-catalogue ARGS` to its end, reading its peak RSS (VmHWM) every 50 ms as it runs;
 * the last value read is its peak. `onStart` is called with its pid once it is spawned.
 */
export async function runCli(
  args: string[],
  onStart?: (pid: number) => void,
): Promise<CommandRun & { output: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: WORK,
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
    timeout: COMMAND_TIMEOUT_MS,
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const pid = child.pid as number;
  onStart?.(pid);
  let peakKb = 0;
  const poll = setInterval(() => {
    peakKb = peakRssKb(pid) ?? peakKb;
  }, 50);
  let seconds = 0;
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", () => {
      seconds = (performance.now() - started) / 1000;
    });
    child.once("close", resolve);
  }).finally(() => clearInterval(poll));
  if (code !== 0) throw new Error(`book-catalogue ${args.join(" ")} exited ${code}:\n${output}`);
  return { seconds, peakRssMb: peakKb / 1024, output };
}

/** VmHWM of a running process in kB; undefined once it has exited (a zombie has none). */
function peakRssKb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /VmHWM:\s+(\d+)/.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb);
  } catch {
    return undefined;
  }
}

// ---- reads while a backup runs ---------------------------------------------------------------

/**
 * The service over the catalogue, read by random id in windows of the same length: one
 * without a backup, then one with backups running through it, for several rounds.
 */
async function readsDuringBackups(
  store: StoreKind,
  dbUrl: string,
  books: number,
  options: BackupOptions,
): Promise<ReadsDuringBackup> {
  const plan = options.quick
    ? { warmupSeconds: 1, seconds: 3, rounds: 2 }
    : { warmupSeconds: 3, seconds: 10, rounds: 3 };
  const service = await startService(dbUrl);
  try {
    const token = await login(service.url);
    const load = (seconds: number) =>
      runLoad(
        {
          url: service.url,
          traffic: { kind: "get-random", readIds: books },
          token,
          connections: options.connections,
          seconds,
        },
        options.generator,
      );
    await load(plan.warmupSeconds);
    const without: LoadResult[] = [];
    const withBackup: LoadResult[] = [];
    const backupSeconds: number[] = [];
    for (let round = 0; round < plan.rounds; round++) {
      without.push(await load(plan.seconds));
      const backups = await backupsInTurn(dbUrl, plan.seconds);
      try {
        withBackup.push(await load(plan.seconds));
      } finally {
        backupSeconds.push(...(await backups.stop()));
      }
    }
    return readsRow(store, books, plan.seconds, without, withBackup, backupSeconds);
  } finally {
    await service.stop();
  }
}

function readsRow(
  store: StoreKind,
  books: number,
  windowSeconds: number,
  without: LoadResult[],
  withBackup: LoadResult[],
  backupSeconds: number[],
): ReadsDuringBackup {
  const row: ReadsDuringBackup = {
    store,
    books,
    windowSeconds,
    rpsWithout: median(without.map((r) => r.rps)),
    rpsWith: median(withBackup.map((r) => r.rps)),
    ratio: median(withBackup.map((r, i) => r.rps / (without[i] as LoadResult).rps)),
    p99MsWithout: median(without.map((r) => r.p99Ms)),
    p99MsWith: median(withBackup.map((r) => r.p99Ms)),
    backups: backupSeconds.length,
    backupSecondsUnderLoad: median(backupSeconds),
    non2xx: [...without, ...withBackup].reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    rounds: without.map((r, i) => ({ without: r, with: withBackup[i] as LoadResult })),
  };
  console.log(
    `GET /book/{id} over ${books.toLocaleString("en")} books on ${store}, ${windowSeconds} s windows: ` +
      `${Math.round(row.rpsWithout).toLocaleString("en")} req/s without a backup, ` +
      `${Math.round(row.rpsWith).toLocaleString("en")} with (ratio ${row.ratio.toFixed(2)}); ` +
      `p99 ${row.p99MsWithout.toFixed(2)} ms and ${row.p99MsWith.toFixed(2)} ms; ` +
      `${row.backups} backups, ${row.backupSecondsUnderLoad.toFixed(1)} s each under the load` +
      (row.non2xx ? `; ${row.non2xx} errors` : ""),
  );
  return row;
}

/**
 * Backups of the catalogue one after another, the first already writing when this returns,
 * until `stop` (or, should stop never come, a deadline well past the window). `stop` waits for
 * the backup under way and gives the time each took.
 */
async function backupsInTurn(dbUrl: string, windowSeconds: number) {
  const file = join(WORK, "reads-during.backup");
  const deadline = Date.now() + windowSeconds * 1000 + COMMAND_TIMEOUT_MS;
  const seconds: number[] = [];
  let stopping = false;
  let firstPid: number | undefined;
  const loop = (async () => {
    while (!stopping && Date.now() < deadline) {
      const run = await runCli(["backup", file, "--db", dbUrl], (pid) => {
        firstPid ??= pid;
      });
      seconds.push(run.seconds);
    }
  })();
  // Begun once its temporary file is there (src/backup/write.ts names it).
  const begun = () =>
    seconds.length > 0 || readdirSync(WORK).some((name) => name.endsWith(`.${firstPid}.partial`));
  for (const waitUntil = Date.now() + 30_000; !begun(); ) {
    if (Date.now() > waitUntil) throw new Error("the backup did not begin within 30 s");
    await Promise.race([loop, new Promise((resolve) => setTimeout(resolve, 10))]);
  }
  return {
    async stop(): Promise<number[]> {
      stopping = true;
      await loop;
      rmSync(file, { force: true });
      return seconds;
    },
  };
}

// ---- report ------------------------------------------------------------------------------------

export function backupTables(results: BackupResults): string {
  const count = results.books.toLocaleString("en");
  const cells = (run: CommandRun) => `${run.seconds.toFixed(1)} | ${run.peakRssMb.toFixed(0)}`;
  return `Backup and restore of ${count} books, each command a process of its own (seconds from spawn to exit; peak RSS from its VmHWM read every 50 ms):

| Store | books | file MB | backup s | backup peak RSS MB | check s | check peak RSS MB | restore s | restore peak RSS MB |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
${results.timings.map((t) => `| ${t.store} | ${t.books.toLocaleString("en")} | ${t.fileMb.toFixed(1)} | ${cells(t.backup)} | ${cells(t.check)} | ${cells(t.restore)} |`).join("\n")}

GET /book/{id} over ${count} books, random ids, in windows alternating without and with backups of the same catalogue running (medians; the ratio is the median of each round's with / without):

| Store | window s | req/s without | req/s with | ratio | p99 ms without | p99 ms with | backups run | backup s under load |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
${results.reads.map((r) => `| ${r.store} | ${r.windowSeconds} | ${Math.round(r.rpsWithout).toLocaleString("en")} | ${Math.round(r.rpsWith).toLocaleString("en")} | ${r.ratio.toFixed(2)} | ${r.p99MsWithout.toFixed(2)} | ${r.p99MsWith.toFixed(2)} | ${r.backups} | ${r.backupSecondsUnderLoad.toFixed(1)} |${r.non2xx ? ` ${r.non2xx} errors` : ""}`).join("\n")}
`;
}
