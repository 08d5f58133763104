// npm run topology [-- --seconds N] [--async]: the recommended production setup of
// docs/topology.md, on this machine, under load and under faults. haproxy (deploy/haproxy)
// before three instances (WORKERS=1, one Redis for the login limit), each reaching a
// PostgreSQL primary and its streaming standby (deploy/postgresql) through one pgbouncer per
// server (deploy/pgbouncer). It measures the load straight at PostgreSQL and through the
// poolers, then kills an instance, stops one, restarts the primary and fails over to the
// standby, each under load, and counts what the clients saw and any acknowledged write lost.
// Prints the report and writes docs/topology-report.md. Everything it starts is stopped and
// removed at the end, on a failure, on Ctrl-C, and after RUN_LIMIT_MS at the latest.
import { writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import type { Cluster } from "../test/support/clusters.js";
import { ROOT } from "../test/support/deploy.js";
import { pgConnect } from "../test/support/pg.js";
import {
  type Load,
  now,
  type Outcome,
  runLoad,
  serverStats,
  watchServers,
} from "./topology-load.js";
import {
  environment,
  errorsByStatus,
  errorWindow,
  lostText,
  lostWrites,
  type Row,
  renderReport,
  type Step,
  throughput,
  unexpectedAnswers,
  writesBackAfter,
} from "./topology-report.js";
import {
  CREDENTIALS,
  cleanUp,
  databaseUrl,
  HAPROXY,
  type Haproxy,
  type Instance,
  instanceEnv,
  killEverythingSync,
  LOGIN_MAX_FAILURES,
  newInstances,
  portOf,
  startDatabases,
  startHaproxy,
  startInstance,
  startPgbouncers,
  startRedis,
  tempFolder,
  waitUntil,
} from "./topology-stack.js";

const option = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const SECONDS = Number(option("--seconds") ?? 10);
const SYNCHRONOUS = !process.argv.includes("--async");
const CLIENTS = 16;
const SEED_BOOKS = 500;
// The whole run's bound: a step that hangs past it ends the run, cleaned up, exit 1.
const RUN_LIMIT_MS = 6 * 60_000;
// A fault's own steps (a restart, a promotion) and the recovery after it, each at most.
const FAULT_LIMIT_MS = 60_000;
const RECOVERY_LIMIT_MS = 30_000;
const REPORT = "docs/topology-report.md";

if (!Number.isInteger(SECONDS) || SECONDS < 1 || SECONDS > 60) {
  console.error("usage: npm run topology [-- --seconds N] [--async], N from 1 to 60");
  process.exit(2);
}

// Before any cluster exists, so that this runs first: the processes killed and the folders
// removed at once, then process.exit, whose handlers drop the clusters and the pgbouncers.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    console.error(`topology: ${signal}: stopping everything`);
    killEverythingSync();
    process.exit(130);
  });
}
const limit = setTimeout(() => {
  console.error(`topology: not finished within ${RUN_LIMIT_MS / 60_000} minutes; stopping`);
  void cleanUp().finally(() => process.exit(1));
}, RUN_LIMIT_MS);
limit.unref();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => console.error(`topology: ${line}`);

interface Topology {
  haproxy: Haproxy;
  instances: Instance[];
  primary: Cluster;
  standby: Cluster;
  load: Load;
  token: string;
  /** Every instance process ever started, for their output at the end. */
  outputs: (() => string)[];
  /** Exits nobody asked for: an instance that died on its own. */
  unexpectedExits: string[];
}

/** Starts (again) the instance, watching for an exit nobody asked for. */
async function start(topology: Topology, index: number): Promise<void> {
  const instance = topology.instances[index] as Instance;
  await startInstance(instance);
  const service = instance.service;
  if (service === undefined) return;
  topology.outputs.push(service.output);
  service.process.once("exit", (code, signal) => {
    if (instance.service === service) {
      topology.unexpectedExits.push(`app${index + 1} exited (${signal ?? `code ${code}`})`);
    }
  });
}

/** Stops an instance on purpose, with the signal given: the exit is expected. */
async function stop(topology: Topology, index: number, signal: NodeJS.Signals) {
  const instance = topology.instances[index] as Instance;
  const service = instance.service;
  instance.service = undefined;
  return service?.stop(signal);
}

async function serverState(topology: Topology, server: string): Promise<string | undefined> {
  const stats = await serverStats(topology.haproxy.socket);
  return stats.find((s) => s.server === server)?.status;
}

async function allUp(topology: Topology): Promise<void> {
  await waitUntil("haproxy seeing every instance UP", 15_000, async () => {
    const stats = await serverStats(topology.haproxy.socket);
    return stats.length === 3 && stats.every((s) => s.status === "UP");
  });
}

/**
 * The load for `seconds`, or with a fault after 3 s: then until writes have succeeded for
 * 3 s on end (at most RECOVERY_LIMIT_MS after the fault's own steps).
 */
async function underLoad(
  topology: Topology,
  name: string,
  fault?: (notes: string[]) => Promise<void>,
): Promise<Step> {
  say(name);
  const { load } = topology;
  load.step = name;
  const from = load.outcomes.length;
  const watcher = watchServers(topology.haproxy.socket);
  const step: Step = { name, outcomes: [], began: now(), ended: 0, transitions: [], notes: [] };
  let release: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    release = resolve;
  });
  const running = runLoad(topology.haproxy.url, topology.token, load, CLIENTS, stopped);
  try {
    if (fault === undefined) {
      await sleep(SECONDS * 1000);
    } else {
      await sleep(3_000);
      step.faultAt = now();
      await bounded(fault(step.notes), FAULT_LIMIT_MS, `${name}: the fault`);
      await recovered(load, from, step.faultAt);
    }
  } finally {
    release();
    await running;
    await watcher.stop();
  }
  step.ended = now();
  step.outcomes = load.outcomes.slice(from);
  step.transitions = watcher.transitions;
  return step;
}

/** Resolves once every write of the last 3 s succeeded and one did; RECOVERY_LIMIT_MS at most. */
async function recovered(load: Load, from: number, faultAt: number): Promise<void> {
  const deadline = Date.now() + RECOVERY_LIMIT_MS;
  for (;;) {
    const recent = load.outcomes
      .slice(from)
      .filter((o) => (o.kind === "create" || o.kind === "update") && o.start > now() - 3_000);
    const ok = (o: Outcome) => typeof o.status === "number" && o.status < 300;
    if (now() - faultAt > 3_000 && recent.length > 0 && recent.every(ok)) return;
    if (Date.now() > deadline) {
      say(`writes still failing ${RECOVERY_LIMIT_MS / 1000} s after the fault; going on`);
      return;
    }
    await sleep(250);
  }
}

async function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for haproxy to mark the server `state`; the time it took from `since`, as a note. */
async function haproxySees(topology: Topology, server: string, state: string, since: number) {
  await waitUntil(`haproxy marking ${server} ${state}`, 15_000, async () => {
    return (await serverState(topology, server))?.startsWith(state) ?? false;
  });
  return `haproxy marked ${server} ${state} ${((now() - since) / 1000).toFixed(1)} s later`;
}

/** kill -9 of app2; haproxy's detection; then app2 started again and back in. */
function killInstance(topology: Topology) {
  return async (notes: string[]) => {
    const killed = now();
    await stop(topology, 1, "SIGKILL");
    notes.push(`kill -9 of app2: ${await haproxySees(topology, "app2", "DOWN", killed)}`);
    const restarted = now();
    await start(topology, 1);
    notes.push(`restarted: ${await haproxySees(topology, "app2", "UP", restarted)}`);
  };
}

/** SIGTERM to app3: its exit code and time; haproxy's detection; then started again. */
function terminateInstance(topology: Topology) {
  return async (notes: string[]) => {
    const signalled = now();
    const code = await stop(topology, 2, "SIGTERM");
    const exited = ((now() - signalled) / 1000).toFixed(1);
    notes.push(`SIGTERM to app3: exit code ${code} after ${exited} s`);
    notes.push(await haproxySees(topology, "app3", "DOWN", signalled));
    const restarted = now();
    await start(topology, 2);
    notes.push(`restarted: ${await haproxySees(topology, "app3", "UP", restarted)}`);
  };
}

function restartPrimary(topology: Topology) {
  return async (notes: string[]) => {
    const began = now();
    await topology.primary.restart("fast");
    notes.push(`pg_ctlcluster restart -m fast took ${((now() - began) / 1000).toFixed(1)} s`);
  };
}

function failOver(topology: Topology) {
  return async (notes: string[]) => {
    const began = now();
    await topology.primary.stop("immediate");
    await topology.standby.promote();
    notes.push(
      `primary stopped (immediate), standby promoted ${((now() - began) / 1000).toFixed(1)} s later`,
    );
  };
}

/** One POST /token through haproxy from `localAddress`: its status. */
function tryLogin(url: string, localAddress: string, headers: Record<string, string> = {}) {
  return new Promise<number>((resolve, reject) => {
    const body = JSON.stringify({ username: CREDENTIALS.username, password: "wrong" });
    const req = httpRequest(
      `${url}/token`,
      {
        method: "POST",
        localAddress,
        agent: false,
        headers: { ...headers, "content-type": "application/json" },
        timeout: 5_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("timeout", () => req.destroy(new Error("POST /token: no answer in 5 s")));
    req.on("error", reject);
    req.end(body);
  });
}

/** 30 wrong passwords from one client, then one naming another address: a row of the table. */
async function wrongPasswords(topology: Topology): Promise<string[]> {
  say("30 wrong passwords from one client");
  const client = "127.0.0.66";
  const before = await serverStats(topology.haproxy.socket);
  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) statuses.push(await tryLogin(topology.haproxy.url, client));
  const after = await serverStats(topology.haproxy.socket);
  const forged = await tryLogin(topology.haproxy.url, client, { "x-forwarded-for": "127.0.0.99" });
  const spread = after
    .map(
      (s) => `${s.server} ${s.hrsp4xx - (before.find((b) => b.server === s.server)?.hrsp4xx ?? 0)}`,
    )
    .join(", ");
  const n = (status: number) => statuses.filter((s) => s === status).length;
  const others = statuses.filter((s) => s !== 401 && s !== 429);
  return [
    "6. 30 wrong passwords, one client",
    `30 × POST /token (${spread} answers)`,
    `401 × ${n(401)}, 429 × ${n(429)}${others.length ? `, other: ${others.join(" ")}` : ""}`,
    "–",
    `at most ${LOGIN_MAX_FAILURES} × 401 across the three: ${n(401) <= LOGIN_MAX_FAILURES ? "yes" : "NO"}; a forged X-Forwarded-For then: ${forged}`,
    "–",
  ];
}

/** Brings the topology up, the instances straight at the primary with prepared statements. */
async function bringUp(): Promise<Topology & { pgbouncerPorts: number[] }> {
  const dir = tempFolder();
  say(`starting redis and PostgreSQL (${SYNCHRONOUS ? "synchronous" : "asynchronous"} standby)`);
  const [redisUrl, pair] = await Promise.all([startRedis(dir), startDatabases(SYNCHRONOUS)]);
  const pgbouncers = await startPgbouncers([pair.primary, pair.standby]);
  const env = instanceEnv(redisUrl);
  const direct = { ...env, DB_URL: databaseUrl([pair.primary]), DB_PREPARED_STATEMENTS: "true" };
  const instances = await newInstances(direct);
  const topology = {
    haproxy: { url: "", socket: "" },
    instances,
    primary: pair.primary,
    standby: pair.standby,
    load: { known: [], outcomes: [], step: "seed" } as Load,
    token: "",
    outputs: [],
    unexpectedExits: [],
    pgbouncerPorts: pgbouncers.map((pgbouncer) => portOf(pgbouncer.url())),
  };
  say("starting three instances and haproxy");
  await Promise.all([0, 1, 2].map((i) => start(topology, i)));
  topology.haproxy = await startHaproxy(
    dir,
    instances.map((instance) => instance.port),
  );
  await allUp(topology);
  topology.token = await token(topology.haproxy.url);
  await seed(topology);
  return topology;
}

async function token(url: string): Promise<string> {
  const answer = await fetch(`${url}/token`, { method: "POST", body: JSON.stringify(CREDENTIALS) });
  if (answer.status !== 200) throw new Error(`POST /token answered ${answer.status}`);
  return ((await answer.json()) as { data: { token: string } }).data.token;
}

/** SEED_BOOKS books created through haproxy, CLIENTS at a time: the ids the reads draw from. */
async function seed(topology: Topology): Promise<void> {
  let next = 0;
  const client = async () => {
    while (next++ < SEED_BOOKS) {
      const book = { title: `seed ${next}`, author: "Seeder", year: 1950 };
      const outcome: Outcome = {
        step: "seed",
        kind: "create",
        start: now(),
        end: 0,
        status: 0,
        book,
      };
      const answer = await fetch(`${topology.haproxy.url}/book`, {
        method: "POST",
        headers: { authorization: topology.token, "content-type": "application/json" },
        body: JSON.stringify(book),
        signal: AbortSignal.timeout(5_000),
      });
      outcome.status = answer.status;
      outcome.end = now();
      if (answer.status !== 201) throw new Error(`seeding: POST /book answered ${answer.status}`);
      outcome.id = ((await answer.json()) as { data: { id: number } }).data.id;
      topology.load.known.push(outcome.id);
      topology.load.outcomes.push(outcome);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
}

/** Every instance stopped and started again on DB_URL naming both pgbouncers. */
async function throughPgbouncers(topology: Topology, ports: number[]): Promise<void> {
  say("the instances, again, through both pgbouncers");
  for (let i = 0; i < 3; i++) await stop(topology, i, "SIGTERM");
  for (const instance of topology.instances) {
    const url = databaseUrl(ports.map((port) => ({ port })));
    instance.env = { ...instance.env, DB_URL: url, DB_PREPARED_STATEMENTS: "false" };
  }
  await Promise.all([0, 1, 2].map((i) => start(topology, i)));
  await allUp(topology);
}

/** The rows of every book a write was acknowledged for, from the primary of the moment. */
async function booksNow(topology: Topology): Promise<Map<number, Row>> {
  const ids = [
    ...new Set(topology.load.outcomes.flatMap((o) => (o.id === undefined ? [] : [o.id]))),
  ];
  const db = await pgConnect(topology.standby.url("catalogue"));
  try {
    const rows =
      await db.sql<Row>`SELECT id, title, author, year FROM books WHERE id = ANY(${ids})`;
    return new Map(rows.map((row) => [row.id, row]));
  } finally {
    await db.end();
  }
}

/** One row of the table for a step under load. */
function row(step: Step, lost: Map<string, import("./topology-report.js").Lost>): string[] {
  const back = writesBackAfter(step);
  const recovery = [
    ...step.notes,
    ...(back === undefined
      ? step.faultAt === undefined
        ? []
        : ["no write failed"]
      : [
          `writes succeeded again ${Number.isFinite(back) ? `${(back / 1000).toFixed(1)} s after the fault` : "NEVER"}`,
        ]),
  ];
  return [
    step.name,
    throughput(step),
    errorsByStatus(step.outcomes),
    errorWindow(step),
    recovery.join("; ") || "–",
    lostText(lost.get(step.name)),
  ];
}

/**
 * What went wrong that should not have: every answer neither 2xx nor 503, hang, exit and lost
 * write, by step.
 */
function defects(
  topology: Topology,
  steps: Step[],
  lost: Map<string, import("./topology-report.js").Lost>,
) {
  const found: string[] = [];
  for (const step of steps) {
    const n = (status: number | string) => step.outcomes.filter((o) => o.status === status).length;
    const unexpected = unexpectedAnswers(step);
    if (unexpected !== undefined) found.push(unexpected);
    if (n("timeout") > 0)
      found.push(`${step.name}: ${n("timeout")} requests had no answer within 5 s.`);
    const l = lost.get(step.name);
    if (l && (l.creates > 0 || l.updates > 0))
      found.push(`${step.name}: acknowledged writes lost: ${lostText(l)}.`);
  }
  for (const exit of topology.unexpectedExits)
    found.push(`An instance exited on its own: ${exit}.`);
  const errors = topology.outputs
    .flatMap((output) => output().split("\n"))
    .filter((line) => /"level":(50|60)/.test(line));
  const messages = [...new Set(errors.map((line) => /"msg":"([^"]*)"/.exec(line)?.[1] ?? line))];
  if (errors.length > 0) {
    found.push(
      `The instances logged ${errors.length} lines at level error or fatal: ${messages.slice(0, 5).join("; ")}.`,
    );
  }
  return found;
}

/** A sentence per figure: what it measures, and what the run's figure says. */
function meanings(steps: Step[]): string[] {
  const [direct, pooled, , term] = steps;
  const rate = (step?: Step) =>
    step ? step.outcomes.length / ((step.ended - step.began) / 1000) : 0;
  const change = rate(direct) > 0 ? Math.round((rate(pooled) / rate(direct) - 1) * 100) : 0;
  const termErrors = term?.outcomes.filter((o) => typeof o.status !== "number" || o.status >= 300);
  return [
    `**Load**: ${CLIENTS} clients through haproxy, each one request at a time: 60 % GET /book/{a known id}, 15 % POST /book, 15 % PUT /book/{id}, 10 % GET /books?q=…&limit=20, each abandoned after 5 s. Requests answered per second, errors included, on a machine that also runs every server of the topology.`,
    `**1a against 1b**: the same load with the instances straight at the primary (prepared statements) and through the pgbouncers (transaction mode, DB_PREPARED_STATEMENTS=false): ${Math.abs(change)} % ${change < 0 ? "fewer" : "more"} requests a second through the poolers in this run. The load of everything else on the machine (above) moves these figures by as much from run to run, so only a large difference means something here; across a network, each extra hop adds its round trip.`,
    "**Errors**: answers that were not 2xx, and requests with no answer within 5 s (`timeout`) or whose connection failed or closed with no answer (`network`, with undici's code), by status and kind of request. A client that gets an error tries again 20 ms later, so an outage of a few seconds makes hundreds of 503s. **From the fault**: when the first failed request began and the last one ended, counted from the moment of the fault (negative: it began just before).",
    "**2, kill -9**: the requests the killed instance held die with it. haproxy retries, on another instance, a connection refused and, except for a POST, a connection closed with no answer; what remains are the POSTs the instance held when it died, which haproxy ends by closing the client's connection (`network`): the book may or may not have been written, and only the client can decide to send it again. haproxy takes the instance out after two failed /ready checks a second apart; it is then started again and comes back after two good checks (its start-up included).",
    `**3, SIGTERM**: with SHUTDOWN_DRAIN_SECONDS=3 the instance answers /ready with 503 and goes on serving for 3 s, longer than haproxy takes to notice (fall × inter, 2 s), then closes its listener and lets the requests in flight finish. ${termErrors && termErrors.length > 0 ? `It cost ${termErrors.length} error(s) here (${errorsByStatus(term?.outcomes ?? [])}).` : "It cost no error: haproxy had stopped sending it requests before the port closed."}`,
    "**4, restart of the primary**: `pg_ctlcluster restart -m fast` (the helper's restart, which also waits for pg_isready) under load. The pgbouncer in front of it holds the clients' queries while it connects again (`server_login_retry = 1`), so a short restart only slows requests down (the slowest answer); a request that waits past DB_TIMEOUT_SECONDS (2 s) answers 503, never 500, and nothing needs a restart. **Writes succeeded again** is when the first write that began after the last failed one was acknowledged.",
    "**5, failover**: the primary stopped (`-m immediate`, as a crash) and the standby promoted (`pg_ctl promote`). The instances find, through the second pgbouncer, the server that now takes writes (`SHOW transaction_read_only` is off) with no restart and no change to any file.",
    `**Acknowledged writes lost**: after the run, every book a 201 was answered for is read from the new primary and must have its title and author; an acknowledged update that was the last of its book, and overlapped no other, must have left its year. With ${SYNCHRONOUS ? "synchronous replication (`synchronous_standby_names` naming the standby, `synchronous_commit = on`), a commit waits for the standby, so none may be lost" : "asynchronous replication, books acknowledged in the moment before the primary died may not have reached the standby"}.`,
    `**6, wrong passwords**: one client (one address, which haproxy passes on in X-Forwarded-For and the instances believe from 127.0.0.1) sends 30 wrong passwords; haproxy spreads them over the three instances, which share the count through Redis, so at most LOGIN_MAX_FAILURES (${LOGIN_MAX_FAILURES}) are answered 401 and the rest 429. A forged X-Forwarded-For changes nothing: haproxy drops it.`,
  ];
}

async function main(): Promise<void> {
  const topology = await bringUp();
  const steps: Step[] = [];
  steps.push(await underLoad(topology, "1a. Straight at PostgreSQL"));
  await throughPgbouncers(topology, topology.pgbouncerPorts);
  steps.push(await underLoad(topology, "1b. Through pgbouncer"));
  steps.push(await underLoad(topology, "2. kill -9 of one instance", killInstance(topology)));
  await allUp(topology);
  steps.push(await underLoad(topology, "3. SIGTERM to one instance", terminateInstance(topology)));
  await allUp(topology);
  steps.push(await underLoad(topology, "4. Restart of the primary", restartPrimary(topology)));
  steps.push(await underLoad(topology, "5. Primary stopped, standby promoted", failOver(topology)));
  const logins = await wrongPasswords(topology);
  say("reading back every acknowledged write");
  const lost = lostWrites(topology.load.outcomes, await booksNow(topology));
  const settings = [
    `- Settings: the files in \`deploy/\` as written, but for addresses, ports and paths; pgbouncer with the test helper's trust auth instead of SCRAM; ${SYNCHRONOUS ? "a synchronous standby" : "an asynchronous standby"}; instances with WORKERS=1, DB_TIMEOUT_SECONDS=2, SHUTDOWN_DRAIN_SECONDS=3, LOGIN_MAX_FAILURES=${LOGIN_MAX_FAILURES}; ${SEED_BOOKS} books seeded; 1a and 1b ${SECONDS} s each.`,
  ];
  const report = renderReport({
    environment: environment(HAPROXY),
    settings,
    rows: [...steps.map((step) => row(step, lost)), logins],
    meanings: meanings(steps),
    defects: defects(topology, steps, lost),
  });
  writeFileSync(join(ROOT, REPORT), report);
  console.log(report);
}

try {
  await main();
  await cleanUp();
  process.exit(0);
} catch (error) {
  console.error(`topology: failed: ${(error as Error).stack ?? error}`);
  await cleanUp();
  process.exit(1);
}
