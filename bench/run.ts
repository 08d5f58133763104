// npm run bench [-- --quick]: the service's throughput as ratios to a bare node:http baseline
// measured in the same run, on SQLite and (with BENCH_DATABASE_URL) on PostgreSQL.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { runAgainst } from "./against.js";
import { backupTables, measureBackups } from "./backup.js";
import { SEARCHES, searchableBooks } from "./catalogue.js";
import {
  login,
  median,
  PASSWORD,
  ROOT,
  resetPeakRss,
  rssMb,
  type StoreKind,
  seededDatabase,
  startBaseline,
  startService,
  USERNAME,
  WORK,
} from "./harness.js";
import { formatLarge, measureLarge } from "./large.js";
import { DELETE_BLOCK, hasWrk, type LoadResult, NEW_BOOK, runLoad, type Traffic } from "./load.js";
import { formatUpgrade, measureUpgrade } from "./upgrade.js";

const QUICK = process.argv.includes("--quick");
/** `--only <text>`: just the scenarios whose name contains the text (or one of `a|b`). */
const ONLY = process.argv[process.argv.indexOf("--only") + 1]?.split("|") ?? [];
const selected = (name: string) =>
  !process.argv.includes("--only") || ONLY.some((text) => name.includes(text));
// Many short rounds: each service run is paired with the baseline run just before it, and the
// ratio reported is the median of those pairs, so drift of the machine's speed cancels out.
const PLAN = QUICK
  ? { warmupSeconds: 1, seconds: 1, rounds: 2 }
  : { warmupSeconds: 2, seconds: 4, rounds: 5 };
const CONNECTIONS = 50;
const GENERATOR = hasWrk() ? "wrk" : "autocannon";

interface Row {
  scenario: string;
  store: StoreKind;
  workers: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  baselineRps: number;
  ratio: number;
  peakRssMb: number;
  non2xx: number;
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
  workers = 1,
  env: Record<string, string> = {},
): Promise<Row | undefined> {
  if (!selected(name)) return undefined;
  const database = await seededDatabase(store, books);
  const service = await startService(database.dbUrl, workers, env);
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
      workers,
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

// ---- search --------------------------------------------------------------------------------

/**
 * One connection: the time a search takes, not the queue that several on two cores would
 * build (the stall scenario has two searching clients).
 */
const SEARCH_CONNECTIONS = 1;

interface SearchRow {
  scenario: string;
  store: StoreKind;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

interface StallRow {
  store: StoreKind;
  searchRps: number;
  searchP99Ms: number;
  getRps: number;
  getP50Ms: number;
  getP99Ms: number;
  non2xx: number;
}

/**
 * The paths of a search scenario: each query with a limit from 10 to 40, so that the listing
 * cache, emptied by the writes, serves few of them.
 */
const searchPaths = (queries: readonly string[], sort: string) =>
  queries.flatMap((q) =>
    Array.from(
      { length: 31 },
      (_, i) => `/books?q=${encodeURIComponent(q)}&sort=${sort}&limit=${10 + i}`,
    ),
  );

/**
 * Searches over `books` books: each kind of query sorted by id and by title; then two
 * clients searching rare words by title in a loop while a third reads books by id. A PUT
 * every 20 ms (a catalogue in use) empties the listing cache, so the searches are measured
 * rather than the cache.
 */
async function measureSearches(store: StoreKind, books: number) {
  const rows: SearchRow[] = [];
  let stall: StallRow | undefined;
  const scenarios = Object.keys(SEARCHES).flatMap((name) =>
    ["id", "title"].map((sort) => `search: ${name}, sort=${sort}`),
  );
  if (![...scenarios, "search: stall"].some(selected)) return { rows, stall };
  const database = await seededDatabase(store, books, searchableBooks(books));
  const service = await startService(database.dbUrl);
  const token = await login(service.url);
  let writing = true;
  const writer = (async () => {
    while (writing) {
      await fetch(`${service.url}/book/${1 + Math.floor(Math.random() * books)}`, {
        method: "PUT",
        headers: { authorization: token },
        body: JSON.stringify({ year: 1800 + Math.floor(Math.random() * 225) }),
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const load = (traffic: Traffic, connections: number, seconds: number) =>
    runLoad({ url: service.url, traffic, token, connections, seconds }, GENERATOR);
  try {
    for (const [name, queries] of Object.entries(SEARCHES)) {
      for (const sort of ["id", "title"]) {
        const scenario = `search: ${name}, sort=${sort}`;
        if (!selected(scenario)) continue;
        const traffic: Traffic = { kind: "paths", paths: searchPaths(queries, sort) };
        await load(traffic, SEARCH_CONNECTIONS, PLAN.warmupSeconds);
        const result = await load(traffic, SEARCH_CONNECTIONS, PLAN.seconds * 2);
        const row = { scenario, store, ...result, non2xx: result.non2xx + result.errors };
        console.log(
          `| ${scenario} | ${store} | ${Math.round(row.rps).toLocaleString("en")} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} |${row.non2xx ? ` ${row.non2xx} errors` : ""}`,
        );
        rows.push(row);
      }
    }
    if (selected("search: stall")) {
      const rare = searchPaths(SEARCHES["a rare word"], "title");
      const seconds = PLAN.seconds * 2;
      const [searching, reading] = await Promise.all([
        load({ kind: "paths", paths: rare }, 2, seconds),
        load({ kind: "get-random", readIds: books }, 1, seconds),
      ]);
      stall = {
        store,
        searchRps: searching.rps,
        searchP99Ms: searching.p99Ms,
        getRps: reading.rps,
        getP50Ms: reading.p50Ms,
        getP99Ms: reading.p99Ms,
        non2xx: searching.non2xx + searching.errors + reading.non2xx + reading.errors,
      };
      console.log(
        `search stall on ${store}: GET /book/{id} p50 ${stall.getP50Ms.toFixed(2)} ms, p99 ${stall.getP99Ms.toFixed(2)} ms while searching at ${Math.round(stall.searchRps)} req/s`,
      );
    }
  } finally {
    writing = false;
    await writer;
    await service.stop();
    await database.drop();
  }
  return { rows, stall };
}

function formatRow(row: Row): string {
  return `| ${row.scenario} | ${row.store} | ${Math.round(row.rps).toLocaleString("en")} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${Math.round(row.baselineRps).toLocaleString("en")} | ${row.ratio.toFixed(2)} | ${row.peakRssMb.toFixed(0)} |${row.non2xx ? ` ${row.non2xx} errors` : ""}`;
}

/**
 * The cost of DB_PREPARED_STATEMENTS=false (what a transaction pooler needs): each statement
 * parsed and planned again, against the named statements of the rows above.
 */
async function unnamedStatements(rows: (Row | undefined)[], runs: number) {
  const unnamed = { DB_PREPARED_STATEMENTS: "false" };
  const suffix = ", DB_PREPARED_STATEMENTS=false";
  const reads = { kind: "get-random", readIds: 10_000 } as const;
  rows.push(
    await measure(`GET /book/{id}, 10,000 books${suffix}`, "postgres", 10_000, reads, 1, unnamed),
  );
  rows.push(
    await measure(`POST /book${suffix}`, "postgres", 10_000, { kind: "create" }, 1, unnamed),
  );
  rows.push(
    await measure(
      `PUT /book/{id}${suffix}`,
      "postgres",
      10_000,
      { kind: "update-random", readIds: 10_000 },
      1,
      unnamed,
    ),
  );
  const mix = { kind: "mix", readIds: 10_000, deletableFrom: 10_001, block: 0 } as const;
  rows.push(
    await measure(
      `mixed 80/15/5${suffix}`,
      "postgres",
      10_000 + runs * DELETE_BLOCK,
      mix,
      1,
      unnamed,
    ),
  );
}

async function main() {
  // `--store <kind>`: just that store's scenarios.
  const only = process.argv[process.argv.indexOf("--store") + 1];
  const stores = (process.env.BENCH_DATABASE_URL ? ["sqlite", "postgres"] : ["sqlite"]).filter(
    (store) => !process.argv.includes("--store") || store === only,
  ) as StoreKind[];
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
  // `--books N` (large.ts) or `--upgrade N` (upgrade.ts): those scenarios in place of the others.
  for (const [flag, name, heading] of [
    ["--books", "books", "A catalogue of"],
    ["--upgrade", "upgrade", "An upgrade of"],
  ] as const) {
    if (!process.argv.includes(flag)) continue;
    const books = Number(process.argv[process.argv.indexOf(flag) + 1]);
    if (!Number.isSafeInteger(books) || books < 1_000)
      throw new Error(`${flag} needs a count of 1000 or more`);
    const results =
      flag === "--books"
        ? (await measureLarge(stores, books, GENERATOR)).map(formatLarge)
        : (await measureUpgrade(stores, books)).map(formatUpgrade);
    const seconds = Math.round((Date.now() - started) / 1000);
    const markdown = `# ${heading} ${books.toLocaleString("en")} books

${new Date().toISOString().slice(0, 10)} (${seconds} s): ${machine}; \`npm run bench -- ${flag} ${books}\`.

${results.join("\n\n")}
`;
    const file = `${name}-${books}.md`;
    mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
    writeFileSync(join(ROOT, "bench", "results", file), markdown);
    console.log(`Written to bench/results/${file} in ${seconds} s`);
    return;
  }
  if (process.argv.includes("--against")) {
    // `--against REF`: this tree against REF, side by side, in place of the baseline's rounds.
    const value = (flag: string, fallback: number) =>
      process.argv.includes(flag) ? Number(process.argv[process.argv.indexOf(flag) + 1]) : fallback;
    const ref = process.argv[process.argv.indexOf("--against") + 1];
    if (ref === undefined || ref.startsWith("--")) throw new Error("--against needs a commit");
    await runAgainst(
      {
        ref,
        stores,
        selected,
        generator: GENERATOR,
        connections: CONNECTIONS,
        blocks: value("--blocks", QUICK ? 2 : 4),
        seconds: value("--seconds", QUICK ? 1 : 2),
      },
      machine,
    );
    return;
  }
  console.log(
    "| Scenario | Store | req/s | p50 ms | p99 ms | baseline req/s | ratio | peak RSS MB |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|");

  const rows: (Row | undefined)[] = [];
  // A scenario, then the same with WORKERS=2 straight after it.
  const both = async (name: string, store: StoreKind, books: number, traffic: Traffic) => {
    rows.push(await measure(name, store, books, traffic));
    rows.push(await measure(`${name}, WORKERS=2`, store, books, traffic, 2));
  };
  for (const store of stores) {
    await both("GET /book/{id}, 10,000 books", store, 10_000, {
      kind: "get-random",
      readIds: 10_000,
    });
    await both("GET /books, 1,000 books", store, 1_000, { kind: "list" });
    await both("POST /book", store, 10_000, { kind: "create" });
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
    if (store === "postgres") await unnamedStatements(rows, runs);
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
  const searchBooks = QUICK ? 100_000 : 1_000_000;
  const searches: SearchRow[] = [];
  const stalls: StallRow[] = [];
  for (const store of scaleStores) {
    const { rows: measuredSearches, stall } = await measureSearches(store, searchBooks);
    searches.push(...measuredSearches);
    if (stall) stalls.push(stall);
  }
  const backups = await measureBackups(stores, {
    quick: QUICK,
    selected,
    generator: GENERATOR,
    connections: CONNECTIONS,
  });

  const measured = rows.filter((row): row is Row => row !== undefined);
  // WORKERS=2 against WORKERS=1: the ratio of their ratios to the baseline measured beside
  // each, so a drift of the machine between the two cancels out.
  const scaling = measured
    .filter((row) => row.workers === 2)
    .flatMap((two) => {
      const scenario = two.scenario.replace(", WORKERS=2", "");
      const one = measured.find(
        (r) => r.workers === 1 && r.scenario === scenario && r.store === two.store,
      );
      return one
        ? [{ scenario, store: two.store, one: one.rps, two: two.rps, gain: two.ratio / one.ratio }]
        : [];
    });
  const scalingTable = scaling
    .map(
      (s) =>
        `| ${s.scenario} | ${s.store} | ${Math.round(s.one).toLocaleString("en")} | ${Math.round(s.two).toLocaleString("en")} | ${s.gain.toFixed(2)} |`,
    )
    .join("\n");
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

WORKERS=2 against WORKERS=1 (the gain is the ratio of their ratios to the baseline):

| Scenario | Store | WORKERS=1 req/s | WORKERS=2 req/s | gain |
|---|---|---:|---:|---:|
${scalingTable}

GET /books over 1,000,000 books:

| Store | first byte ms | total s | MB sent | peak RSS MB | idle RSS MB before |
|---|---:|---:|---:|---:|---:|
${listing}

Search over ${searchBooks.toLocaleString("en")} books (\`q\`, 10 to 40 a page, ${SEARCH_CONNECTIONS} connections, one update every 20 ms):

| Scenario | Store | req/s | p50 ms | p99 ms |
|---|---|---:|---:|---:|
${searches.map((r) => `| ${r.scenario} | ${r.store} | ${Math.round(r.rps).toLocaleString("en")} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} |${r.non2xx ? ` ${r.non2xx} errors` : ""}`).join("\n")}

Two clients searching rare words sorted by title in a loop, a third reading books by id:

| Store | searches/s | search p99 ms | GET /book/{id} req/s | GET p50 ms | GET p99 ms |
|---|---:|---:|---:|---:|---:|
${stalls.map((s) => `| ${s.store} | ${Math.round(s.searchRps).toLocaleString("en")} | ${s.searchP99Ms.toFixed(2)} | ${Math.round(s.getRps).toLocaleString("en")} | ${s.getP50Ms.toFixed(2)} | ${s.getP99Ms.toFixed(2)} |${s.non2xx ? ` ${s.non2xx} errors` : ""}`).join("\n")}

${backupTables(backups)}`;
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "latest.md"), markdown);
  writeFileSync(
    join(ROOT, "bench", "results", "latest.json"),
    `${JSON.stringify({ date: new Date().toISOString(), quick: QUICK, machine, generator: GENERATOR, plan: PLAN, connections: CONNECTIONS, rows: measured, scaling, listing: large, searches, stalls, backups }, null, 2)}\n`,
  );
  console.log(
    `\nWORKERS=2 against WORKERS=1:\n${scalingTable}\n\nGET /books over 1,000,000 books:\n${listing}\nWritten to bench/results/latest.md and latest.json in ${seconds} s`,
  );
}

try {
  await main();
} finally {
  rmSync(WORK, { recursive: true, force: true });
}
