// npm run bench -- --against REF: the working tree and REF serving at once, each scenario
// measured in short runs in ABBA order, and the median of the pairwise ratios (this tree over
// REF) with their spread. This machine's speed moves by half within minutes; two builds
// measured side by side, alternating, see a 10 % change that rounds against a baseline miss.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pgConnect } from "../test/support/pg.js";
import {
  cpuMs,
  login,
  median,
  PASSWORD,
  ROOT,
  type Running,
  type StoreKind,
  startService,
  USERNAME,
  WORK,
} from "./harness.js";
import { type LoadResult, NEW_BOOK, runLoad, type Traffic } from "./load.js";

export interface AgainstOptions {
  ref: string;
  stores: StoreKind[];
  selected: (name: string) => boolean;
  generator: "wrk" | "autocannon";
  connections: number;
  /** ABBA blocks per scenario: each gives two pairs. */
  blocks: number;
  seconds: number;
}

interface Scenario {
  name: string;
  books: number;
  traffic: Traffic;
  workers?: number;
}

/** Books a mixed run may delete: 2.5 % of a short run's requests, with room to spare. */
const MIX_BLOCK = 2_000;

function scenarios(runs: number): Scenario[] {
  const reads = 10_000;
  return [
    {
      name: "GET /book/{id}, 10,000 books",
      books: reads,
      traffic: { kind: "get-random", readIds: reads },
    },
    {
      name: "GET /book/{id}, 10,000 books, WORKERS=2",
      books: reads,
      traffic: { kind: "get-random", readIds: reads },
      workers: 2,
    },
    { name: "GET /books, 1,000 books", books: 1_000, traffic: { kind: "list" } },
    { name: "POST /book", books: 0, traffic: { kind: "create" } },
    { name: "POST /book, WORKERS=2", books: 0, traffic: { kind: "create" }, workers: 2 },
    { name: "PUT /book/{id}", books: reads, traffic: { kind: "update-random", readIds: reads } },
    {
      name: "mixed 80/15/5",
      books: reads + runs * MIX_BLOCK,
      traffic: {
        kind: "mix",
        readIds: reads,
        deletableFrom: reads + 1,
        block: 0,
        blockSize: MIX_BLOCK,
      },
    },
    {
      name: "POST /token",
      books: 0,
      traffic: { kind: "token", username: USERNAME, password: PASSWORD },
    },
  ];
}

interface Build {
  root: string;
  /** The server's entry point, as the build's `npm start` names it. */
  entry: string;
}

function entryOf(root: string): string {
  const start = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.start;
  const entry = /\bnode\s+(\S+\.js)/.exec(start)?.[1];
  if (entry === undefined) throw new Error(`no server entry in npm start: ${start}`);
  return entry;
}

/** A lockfile's dependencies: the same whatever the package's own version. */
function dependenciesOf(lockfile: string): string {
  const lock = JSON.parse(lockfile);
  delete lock.version;
  delete lock.packages?.[""]?.version;
  return JSON.stringify(lock);
}

/** REF built in a worktree of its own; node_modules shared by links when the lockfile is the same. */
function buildRef(ref: string): { build: Build; commit: string; remove(): void } {
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
  const dir = join(WORK, `ref-${commit.slice(0, 8)}`);
  git("worktree", "add", "--detach", dir, commit);
  const remove = () => {
    git("worktree", "remove", "--force", dir);
  };
  try {
    const sameLock =
      dependenciesOf(git("show", `${commit}:package-lock.json`)) ===
      dependenciesOf(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
    const run = (cmd: string, args: string[]) =>
      execFileSync(cmd, args, { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
    if (sameLock) run("cp", ["-al", join(ROOT, "node_modules"), join(dir, "node_modules")]);
    else run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"]);
    run("npm", ["run", "build"]);
  } catch (error) {
    remove();
    throw error;
  }
  return { build: { root: dir, entry: entryOf(dir) }, commit, remove };
}

/** An empty database of the store's kind; each build migrates it as it starts. */
async function emptyDatabase(store: StoreKind): Promise<{ dbUrl: string; drop(): Promise<void> }> {
  const name = `ab_${randomBytes(4).toString("hex")}`;
  if (store === "sqlite") {
    const path = join(WORK, `${name}.db`);
    return {
      dbUrl: `sqlite:${path}`,
      drop: async () => {
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
      },
    };
  }
  const base = process.env.BENCH_DATABASE_URL as string;
  const admin = await pgConnect(base);
  await admin.script(`CREATE SCHEMA ${name}`);
  const url = new URL(base);
  url.searchParams.set("options", `-c search_path=${name}`);
  return {
    dbUrl: url.toString(),
    drop: async () => {
      await admin.script(`DROP SCHEMA ${name} CASCADE`);
      await admin.end();
    },
  };
}

/** Books created through the API, so that each build's own code writes its own schema. */
async function seedOverHttp(url: string, token: string, books: number) {
  let next = 0;
  const worker = async () => {
    while (next < books) {
      next += 1;
      const response = await fetch(`${url}/book`, {
        method: "POST",
        headers: { authorization: token, "content-type": "application/json" },
        body: NEW_BOOK,
      });
      if (response.status !== 201) throw new Error(`seeding answered ${response.status}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

interface Side {
  service: Running;
  token: string;
  runs: number;
  drop(): Promise<void>;
}

async function startSide(store: StoreKind, scenario: Scenario, build: Build): Promise<Side> {
  const database = await emptyDatabase(store);
  const service = await startService(database.dbUrl, scenario.workers ?? 1, {}, build);
  const token = await login(service.url);
  await seedOverHttp(service.url, token, scenario.books);
  return { service, token, runs: 0, drop: database.drop };
}

export interface AgainstRow {
  scenario: string;
  store: StoreKind;
  refRps: number;
  rps: number;
  ratio: number;
  low: number;
  high: number;
  pairs: number;
  /** The server's CPU time per request (its workers' too), in µs: the median of the runs. */
  refCpuUs: number;
  cpuUs: number;
  /** The median of the pairwise ratios of CPU per request (this tree over REF): below 1 is cheaper. */
  cpuRatio: number;
  non2xx: number;
}

/** A run, and the server's CPU time per request in it. */
type Run = LoadResult & { cpuUs: number };

/** One scenario: a warm-up each, then ABBA blocks; each A beside the B next to it is a pair. */
async function measurePair(
  store: StoreKind,
  scenario: Scenario,
  refBuild: Build,
  options: AgainstOptions,
): Promise<AgainstRow> {
  const { traffic } = scenario;
  const ref = await startSide(store, scenario, refBuild);
  const ours = await startSide(store, scenario, { root: ROOT, entry: entryOf(ROOT) });
  const load = async (side: Side, seconds: number): Promise<Run> => {
    const block = side.runs++;
    const next = traffic.kind === "mix" ? { ...traffic, block } : traffic;
    const url = side.service.url;
    const pid = side.service.child.pid as number;
    const cpuBefore = cpuMs(pid);
    const result = await runLoad(
      { url, traffic: next, token: side.token, connections: options.connections, seconds },
      options.generator,
    );
    return { ...result, cpuUs: ((cpuMs(pid) - cpuBefore) * 1000) / (result.rps * seconds) };
  };
  try {
    await load(ref, 1);
    await load(ours, 1);
    const refRuns: Run[] = [];
    const ourRuns: Run[] = [];
    for (let block = 0; block < options.blocks; block++) {
      refRuns.push(await load(ref, options.seconds));
      ourRuns.push(await load(ours, options.seconds));
      ourRuns.push(await load(ours, options.seconds));
      refRuns.push(await load(ref, options.seconds));
    }
    const ratios = ourRuns.map((r, i) => r.rps / (refRuns[i] as Run).rps).sort((a, b) => a - b);
    const cpuRatios = ourRuns.map((r, i) => r.cpuUs / (refRuns[i] as Run).cpuUs);
    return {
      scenario: scenario.name,
      store,
      refRps: median(refRuns.map((r) => r.rps)),
      rps: median(ourRuns.map((r) => r.rps)),
      ratio: median(ratios),
      low: ratios[0] as number,
      high: ratios[ratios.length - 1] as number,
      pairs: ratios.length,
      refCpuUs: median(refRuns.map((r) => r.cpuUs)),
      cpuUs: median(ourRuns.map((r) => r.cpuUs)),
      cpuRatio: median(cpuRatios),
      non2xx: [...refRuns, ...ourRuns].reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    };
  } finally {
    await ref.service.stop();
    await ours.service.stop();
    await ref.drop();
    await ours.drop();
  }
}

const formatRow = (row: AgainstRow) =>
  `| ${row.scenario} | ${row.store} | ${Math.round(row.refRps).toLocaleString("en")} | ${Math.round(row.rps).toLocaleString("en")} | ${row.ratio.toFixed(2)} | ${row.low.toFixed(2)}–${row.high.toFixed(2)} | ${row.pairs} | ${Math.round(row.refCpuUs)} | ${Math.round(row.cpuUs)} | ${row.cpuRatio.toFixed(2)} |${row.non2xx ? ` ${row.non2xx} errors` : ""}`;

export async function runAgainst(options: AgainstOptions, machine: string): Promise<void> {
  const ref = buildRef(options.ref);
  const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
    cwd: ROOT,
    encoding: "utf8",
  }).trim();
  const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "web", "package.json"], {
    cwd: ROOT,
    encoding: "utf8",
  }).trim();
  const ours = `${head}${dirty ? " + changes" : ""}`;
  const heading = [
    `A/B on ${machine}: this tree (${ours}) against ${ref.commit.slice(0, 8)} (${options.ref}), both serving at once;`,
    `${options.blocks} ABBA blocks of ${options.seconds} s runs after a warm-up, ${options.connections} connections from ${options.generator}.`,
    "The ratio is the median of the pairwise ratios (this tree over REF); the spread is their lowest and highest.",
    "CPU is the server's (workers included) per request, in µs; its ratio, this tree over REF, is steadier",
    "than the throughput's when other work shares the machine: below 1 is cheaper.",
    "",
    "| Scenario | Store | REF req/s | this req/s | ratio | spread | pairs | REF CPU | this CPU | CPU ratio |",
    "|---|---|---:|---:|---:|---|---:|---:|---:|---:|",
  ];
  console.log(heading.join("\n"));
  const rows: AgainstRow[] = [];
  try {
    const list = scenarios(2 * options.blocks + 1).filter((s) => options.selected(s.name));
    for (const store of options.stores) {
      for (const scenario of list) {
        const row = await measurePair(store, scenario, ref.build, options);
        console.log(formatRow(row));
        rows.push(row);
      }
    }
  } finally {
    ref.remove();
  }
  const file = join(ROOT, "bench", "results", "against.md");
  writeFileSync(
    file,
    `${[`${new Date().toISOString().slice(0, 10)}. ${heading[0]}`, ...heading.slice(1), ...rows.map(formatRow)].join("\n")}\n`,
  );
  console.log(`\nWritten to bench/results/against.md`);
}
