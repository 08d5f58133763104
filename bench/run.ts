// npm run bench [-- --quick]: the service's throughput as ratios to a bare node:http baseline
// measured in the same run, on SQLite and (with BENCH_DATABASE_URL) on PostgreSQL.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { cpus, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import postgres from "postgres";
import { openStore } from "../src/store/open.js";
import { DELETE_BLOCK, hasWrk, type LoadResult, NEW_BOOK, runLoad, type Traffic } from "./load.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const QUICK = process.argv.includes("--quick");
/** `--only <text>`: just the scenarios whose name contains the text. */
const ONLY = process.argv[process.argv.indexOf("--only") + 1];
const selected = (name: string) =>
  !process.argv.includes("--only") || (ONLY !== undefined && name.includes(ONLY));
// Many short rounds: each service run is paired with the baseline run just before it, and the
// ratio reported is the median of those pairs, so drift of the machine's speed cancels out.
const PLAN = QUICK
  ? { warmupSeconds: 1, seconds: 1, rounds: 2 }
  : { warmupSeconds: 2, seconds: 4, rounds: 5 };
const CONNECTIONS = 50;
const USERNAME = "bench";
const PASSWORD = "bench-password";
const SECRET = randomBytes(32).toString("hex");
const WORK = mkdtempSync(join(tmpdir(), "book-bench-"));
const GENERATOR = hasWrk() ? "wrk" : "autocannon";

type StoreKind = "sqlite" | "postgres";

interface Row {
  scenario: string;
  store: StoreKind;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  baselineRps: number;
  ratio: number;
  peakRssMb: number;
  non2xx: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

// ---- databases ---------------------------------------------------------------------------

/** A fresh database of `books` books with ids 1..books. */
async function seededDatabase(
  kind: StoreKind,
  books: number,
): Promise<{ dbUrl: string; drop(): Promise<void> }> {
  if (kind === "sqlite") {
    const path = join(WORK, `books-${randomBytes(4).toString("hex")}.db`);
    await (await openStore({ db: { kind: "sqlite", path }, pgPoolSize: 1 })).close();
    const db = new Database(path);
    const insert = db.prepare("INSERT INTO books (title, author, year) VALUES (?, ?, ?)");
    db.transaction(() => {
      for (let i = 1; i <= books; i++)
        insert.run(`Title number ${i}`, `Author ${i % 1000}`, 1900 + (i % 120));
    })();
    db.close();
    return { dbUrl: `sqlite:${path}`, drop: async () => rmSync(path, { force: true }) };
  }
  const base = process.env.BENCH_DATABASE_URL as string;
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  const url = new URL(base);
  url.searchParams.set("search_path", schema);
  const dbUrl = url.toString();
  await (await openStore({ db: { kind: "postgres", url: dbUrl }, pgPoolSize: 1 })).close();
  await admin.unsafe(`INSERT INTO ${schema}.books (title, author, year)
    SELECT 'Title number ' || g, 'Author ' || (g % 1000), 1900 + (g % 120) FROM generate_series(1, ${books}) g`);
  await admin.unsafe(`ANALYZE ${schema}.books`);
  return {
    dbUrl,
    drop: async () => {
      await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

// ---- processes ---------------------------------------------------------------------------

interface Running {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a process whose output goes to a file, and waits for its listening port. */
async function startProcess(
  args: string[],
  env: Record<string, string>,
  portPattern: RegExp,
): Promise<Running> {
  const logPath = join(WORK, `log-${randomBytes(4).toString("hex")}.txt`);
  const log = openSync(logPath, "w");
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: "0", ...env },
    stdio: ["ignore", log, log],
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const port = portPattern.exec(readFileSync(logPath, "utf8"))?.[1];
    if (port) {
      return {
        url: `http://127.0.0.1:${port}`,
        child,
        stop: () =>
          new Promise((resolve) => {
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`process did not start:\n${readFileSync(logPath, "utf8")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const startService = (dbUrl: string) =>
  startProcess(
    ["dist/server.js"],
    {
      NODE_ENV: "production",
      DB_URL: dbUrl,
      // Passed through for experiments with the pool size.
      ...(process.env.PG_POOL_SIZE ? { PG_POOL_SIZE: process.env.PG_POOL_SIZE } : {}),
      SECRET_TOKEN: SECRET,
      AUTH_USERNAME: USERNAME,
      AUTH_PASSWORD: PASSWORD,
    },
    /Server listening at http:\/\/127\.0\.0\.1:(\d+)/,
  );

async function startBaseline(sample: { status: number; contentType: string; body: string }) {
  const file = join(WORK, `sample-${randomBytes(4).toString("hex")}.json`);
  writeFileSync(file, JSON.stringify(sample));
  return startProcess(
    ["--import", "tsx", "bench/baseline.ts"],
    { SAMPLE_FILE: file },
    /listening (\d+)/,
  );
}

/** Resident memory of a process in MB; `peak` is the high-water mark since the last reset. */
function rssMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) / 1024;
}
function resetPeakRss(pid: number) {
  // Writing 5 to clear_refs resets VmHWM (Linux 4.0+).
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

async function login(url: string): Promise<string> {
  const response = await fetch(`${url}/token`, {
    method: "POST",
    body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
  });
  return ((await response.json()) as { data: { token: string } }).data.token;
}

/** One request of the scenario's kind, whose exact answer the baseline then repeats. */
async function sampleAnswer(url: string, token: string, traffic: Traffic) {
  const request: { method: string; path: string; body?: string } =
    traffic.kind === "list"
      ? { method: "GET", path: "/books" }
      : traffic.kind === "create"
        ? { method: "POST", path: "/book", body: NEW_BOOK }
        : traffic.kind === "update-random"
          ? { method: "PUT", path: "/book/1", body: '{"year":1999}' }
          : traffic.kind === "token"
            ? {
                method: "POST",
                path: "/token",
                body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
              }
            : { method: "GET", path: "/book/1" };
  const response = await fetch(`${url}${request.path}`, {
    method: request.method,
    headers: { authorization: token, "content-type": "application/json" },
    ...(request.body ? { body: request.body } : {}),
  });
  return {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "application/json",
    body: await response.text(),
  };
}

// ---- scenarios ---------------------------------------------------------------------------

/** Warm-up, then rounds alternating baseline and service; medians of each. */
async function measure(
  name: string,
  store: StoreKind,
  books: number,
  traffic: Traffic,
): Promise<Row | undefined> {
  if (!selected(name)) return undefined;
  const database = await seededDatabase(store, books);
  const service = await startService(database.dbUrl);
  const token = await login(service.url);
  const baseline = await startBaseline(await sampleAnswer(service.url, token, traffic));
  let runs = 0;
  const load = (url: string, seconds: number) => {
    const block = runs++;
    const next = traffic.kind === "mix" ? { ...traffic, block } : traffic;
    return runLoad({ url, traffic: next, token, connections: CONNECTIONS, seconds }, GENERATOR);
  };
  try {
    await load(service.url, PLAN.warmupSeconds);
    await load(baseline.url, PLAN.warmupSeconds);
    resetPeakRss(service.child.pid as number);
    const serviceRuns: LoadResult[] = [];
    const baselineRuns: LoadResult[] = [];
    for (let round = 0; round < PLAN.rounds; round++) {
      baselineRuns.push(await load(baseline.url, PLAN.seconds));
      serviceRuns.push(await load(service.url, PLAN.seconds));
    }
    const rps = median(serviceRuns.map((r) => r.rps));
    const baselineRps = median(baselineRuns.map((r) => r.rps));
    const ratio = median(serviceRuns.map((r, i) => r.rps / (baselineRuns[i] as LoadResult).rps));
    const row: Row = {
      scenario: name,
      store,
      rps,
      p50Ms: median(serviceRuns.map((r) => r.p50Ms)),
      p99Ms: median(serviceRuns.map((r) => r.p99Ms)),
      baselineRps,
      ratio,
      peakRssMb: rssMb(service.child.pid as number, "VmHWM"),
      non2xx: serviceRuns.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    };
    console.log(formatRow(row));
    return row;
  } finally {
    await baseline.stop();
    await service.stop();
    await database.drop();
  }
}

/** GET /books over a large catalogue: time to first byte, total time, peak RSS. */
async function listLarge(store: StoreKind, books: number) {
  const database = await seededDatabase(store, books);
  const service = await startService(database.dbUrl);
  const token = await login(service.url);
  const pid = service.child.pid as number;
  try {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const idleRssMb = rssMb(pid, "VmRSS");
    resetPeakRss(pid);
    const result = await new Promise<{ firstByteMs: number; totalMs: number; bytes: number }>(
      (resolve, reject) => {
        const started = performance.now();
        let firstByteMs = 0;
        let bytes = 0;
        get(`${service.url}/books`, { headers: { authorization: token } }, (response) => {
          response.on("data", (chunk: Buffer) => {
            if (bytes === 0) firstByteMs = performance.now() - started;
            bytes += chunk.length;
          });
          response.on("end", () =>
            resolve({ firstByteMs, totalMs: performance.now() - started, bytes }),
          );
          response.on("error", reject);
        }).on("error", reject);
      },
    );
    const entry = { store, books, idleRssMb, peakRssMb: rssMb(pid, "VmHWM"), ...result };
    console.log(
      `GET /books over ${books.toLocaleString("en")} books on ${store}: first byte ${result.firstByteMs.toFixed(1)} ms, ` +
        `all ${(result.bytes / 1e6).toFixed(1)} MB in ${(result.totalMs / 1000).toFixed(2)} s, peak RSS ${entry.peakRssMb.toFixed(0)} MB ` +
        `(idle ${idleRssMb.toFixed(0)} MB)`,
    );
    return entry;
  } finally {
    await service.stop();
    await database.drop();
  }
}

function formatRow(row: Row): string {
  return `| ${row.scenario} | ${row.store} | ${Math.round(row.rps).toLocaleString("en")} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${Math.round(row.baselineRps).toLocaleString("en")} | ${row.ratio.toFixed(2)} | ${row.peakRssMb.toFixed(0)} |${row.non2xx ? ` ${row.non2xx} errors` : ""}`;
}

async function main() {
  const stores: StoreKind[] = process.env.BENCH_DATABASE_URL ? ["sqlite", "postgres"] : ["sqlite"];
  const started = Date.now();
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  console.log(
    `Benchmark${QUICK ? " (quick)" : ""} on ${machine}; load from ${GENERATOR}, ${CONNECTIONS} connections`,
  );
  if (GENERATOR === "autocannon") {
    console.log(
      "wrk is not installed: using autocannon, which saturates before a fast server does, so ratios read low",
    );
  }
  console.log(
    "| Scenario | Store | req/s | p50 ms | p99 ms | baseline req/s | ratio | peak RSS MB |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|");

  const rows: (Row | undefined)[] = [];
  for (const store of stores) {
    rows.push(
      await measure("GET /book/{id}, 10,000 books", store, 10_000, {
        kind: "get-random",
        readIds: 10_000,
      }),
    );
    rows.push(await measure("GET /books, 1,000 books", store, 1_000, { kind: "list" }));
    rows.push(await measure("POST /book", store, 10_000, { kind: "create" }));
    rows.push(
      await measure("PUT /book/{id}", store, 10_000, { kind: "update-random", readIds: 10_000 }),
    );
    // 10,000 books to read and update, and behind them a block of books to delete per run.
    const runs = 2 + 2 * PLAN.rounds;
    rows.push(
      await measure("mixed 80/15/5", store, 10_000 + runs * DELETE_BLOCK, {
        kind: "mix",
        readIds: 10_000,
        deletableFrom: 10_001,
        block: 0,
      }),
    );
    rows.push(
      await measure("POST /token", store, 0, {
        kind: "token",
        username: USERNAME,
        password: PASSWORD,
      }),
    );
  }
  const scaleStores: StoreKind[] = QUICK ? ["sqlite"] : stores;
  for (const store of scaleStores) {
    for (const books of [1_000, 100_000, 1_000_000]) {
      rows.push(
        await measure(`GET /book/{id}, ${books.toLocaleString("en")} books`, store, books, {
          kind: "get-random",
          readIds: books,
        }),
      );
    }
  }
  const large = [];
  for (const store of scaleStores) {
    if (selected("GET /books over 1,000,000 books")) large.push(await listLarge(store, 1_000_000));
  }

  const measured = rows.filter((row): row is Row => row !== undefined);
  const seconds = Math.round((Date.now() - started) / 1000);
  const table = [
    "| Scenario | Store | req/s | p50 ms | p99 ms | baseline req/s | ratio | peak RSS MB |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
    ...measured.map(formatRow),
  ].join("\n");
  const listing = large
    .map(
      (l) =>
        `| ${l.store} | ${l.firstByteMs.toFixed(1)} | ${(l.totalMs / 1000).toFixed(2)} | ${(l.bytes / 1e6).toFixed(1)} | ${l.peakRssMb.toFixed(0)} | ${l.idleRssMb.toFixed(0)} |`,
    )
    .join("\n");
  const markdown = `# Benchmark results

${new Date().toISOString().slice(0, 10)}, ${QUICK ? "quick run" : "full run"} (${seconds} s): ${machine}.
Load from ${GENERATOR} over 127.0.0.1 with ${CONNECTIONS} connections; ${PLAN.rounds} round(s) of ${PLAN.seconds} s
alternating baseline and service after a warm-up; medians, and the ratio is the median of each
service round over the baseline round just before it. The baseline is a bare node:http
server answering the same bytes. The service runs the production build with NODE_ENV=production
and logs one line per request to a file.

${table}

GET /books over 1,000,000 books:

| Store | first byte ms | total s | MB sent | peak RSS MB | idle RSS MB before |
|---|---:|---:|---:|---:|---:|
${listing}
`;
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "latest.md"), markdown);
  writeFileSync(
    join(ROOT, "bench", "results", "latest.json"),
    `${JSON.stringify({ date: new Date().toISOString(), quick: QUICK, machine, generator: GENERATOR, plan: PLAN, connections: CONNECTIONS, rows: measured, listing: large }, null, 2)}\n`,
  );
  console.log(
    `\nGET /books over 1,000,000 books:\n${listing}\nWritten to bench/results/latest.md and latest.json in ${seconds} s`,
  );
}

try {
  await main();
} finally {
  rmSync(WORK, { recursive: true, force: true });
}
