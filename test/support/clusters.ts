// PostgreSQL clusters of a test's own, made with Debian's postgresql-common tools, for the
// fault tests that stop, restart or fail over a server: the machine's shared cluster must
// never be the one that goes down. Each has a random name and its own port, and is removed
// on drop() or, if a test crashed first, as its process exits.
import { execFile, execFileSync } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { portRange } from "./ports.js";

const VERSION = "15";
const BIN = `/usr/lib/postgresql/${VERSION}/bin`;
// Without systemd, pg_ctlcluster must start the server itself.
const CTL = ["--skip-systemctl-redirect"];
const WAIT_MS = 20_000;

/** Settings every cluster gets: streaming replication possible, small, durable. */
const BASE_SETTINGS: Record<string, string> = {
  listen_addresses: "127.0.0.1",
  wal_level: "replica",
  max_wal_senders: "5",
  max_replication_slots: "5",
  wal_keep_size: "64MB",
  hot_standby: "on",
  shared_buffers: "16MB",
  fsync: "on",
};

export interface Cluster {
  name: string;
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/DATABASE (default "postgres"). */
  url(database?: string): string;
  start(): Promise<void>;
  stop(mode?: "fast" | "immediate"): Promise<void>;
  restart(mode?: "fast" | "immediate"): Promise<void>;
  /** pg_ctl promote, resolved once it accepts writes (pg_is_in_recovery() false). */
  promote(): Promise<void>;
  /** Runs SQL as postgres through psql (simple, for setup), returns stdout trimmed. */
  psql(sql: string, database?: string): Promise<string>;
  /** Stops it (immediate) and removes its data, configuration and log; safe twice. */
  drop(): Promise<void>;
}

/**
 * Why cluster tests cannot run here, or false when they can. Under CI=true a missing
 * requirement is an error, never a skip.
 */
export function clusterSkipReason(): string | false {
  const missing =
    process.getuid?.() !== 0
      ? "not run as root (pg_createcluster and pg_ctlcluster need it)"
      : !existsSync("/usr/bin/pg_createcluster") || !existsSync(`${BIN}/pg_basebackup`)
        ? `no pg_createcluster or PostgreSQL ${VERSION} (apt-get install postgresql-${VERSION})`
        : false;
  if (missing === false) return false;
  const reason = `Cluster tests skipped: ${missing}`;
  if (process.env.CI === "true") throw new Error(`${reason}; under CI=true they must run`);
  return reason;
}

/** A fresh cluster on a free port, started: trust auth on 127.0.0.1, replication too. */
export async function createCluster(
  options: { settings?: Record<string, string> } = {},
): Promise<Cluster> {
  const cluster = await newCluster(options.settings);
  try {
    await cluster.start();
  } catch (error) {
    await cluster.drop().catch(() => undefined);
    throw error;
  }
  return cluster;
}

/**
 * A primary and a streaming standby of it (pg_basebackup -R), the standby caught up.
 * synchronous: commits on the primary wait until the standby has flushed them. settings: for
 * both servers, over the base ones (a topology's own postgresql.conf lines, say).
 */
export async function createPrimaryWithStandby(
  options: { synchronous?: boolean; settings?: Record<string, string> } = {},
): Promise<{
  primary: Cluster;
  standby: Cluster;
  drop(): Promise<void>;
}> {
  const settings = options.settings ?? {};
  const primary = await createCluster({ settings });
  const standby = await createStandby(primary, options.synchronous ?? false, settings).catch(
    async (error) => {
      await primary.drop().catch(() => undefined);
      throw error;
    },
  );
  return {
    primary,
    standby,
    // The standby first, so that it does not outlive its primary only to log retries.
    drop: async () => {
      await standby.drop();
      await primary.drop();
    },
  };
}

async function createStandby(
  primary: Cluster,
  synchronous: boolean,
  settings: Record<string, string>,
): Promise<Cluster> {
  const standby = await newCluster(settings);
  try {
    await baseBackup(primary, standby);
    await standby.start();
    await waitFor(standby, "the standby in recovery", async () => {
      return (await standby.psql("SELECT pg_is_in_recovery()")) === "t";
    });
    // The walreceiver's application_name is the standby's cluster_name ('15/NAME').
    const application = await standby.psql("SHOW cluster_name");
    const replica = `FROM pg_stat_replication WHERE application_name = '${application}'`;
    const target = await primary.psql("SELECT pg_current_wal_lsn()");
    await waitFor(standby, "the standby streaming and caught up", async () => {
      const row = await primary.psql(
        `SELECT state = 'streaming' AND replay_lsn >= '${target}' ${replica}`,
      );
      return row === "t";
    });
    if (synchronous) {
      // Set only now: pg_basebackup's own WAL stream must not be taken for the standby.
      await primary.psql("ALTER SYSTEM SET synchronous_standby_names = '*'");
      await primary.psql("SELECT pg_reload_conf()");
      await waitFor(primary, "the standby synchronous", async () => {
        return (await primary.psql(`SELECT sync_state ${replica}`)) === "sync";
      });
    }
  } catch (error) {
    await standby.drop().catch(() => undefined);
    throw error;
  }
  return standby;
}

/** The clusters this process made and has not dropped, for the exit handler. */
const undropped = new Set<string>();
let cleanupInstalled = false;

/** On exit, and on the signals that otherwise end a process without an exit event. */
function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on("exit", dropUndroppedSync);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      dropUndroppedSync();
      // Then die of the signal as if no handler had been there.
      process.kill(process.pid, signal);
    });
  }
}

function dropUndroppedSync(): void {
  for (const name of undropped) {
    try {
      execFileSync("pg_ctlcluster", [...CTL, "-m", "immediate", VERSION, name, "stop"], {
        stdio: "ignore",
        env: ENV,
      });
    } catch {
      // Already stopped, or never fully made.
    }
    rmSync(settingsFile(name), { force: true });
    try {
      execFileSync("pg_dropcluster", ["--stop", VERSION, name], { stdio: "ignore", env: ENV });
    } catch {
      // Never made: nothing to remove.
    }
    undropped.delete(name);
  }
}

/** A new cluster, made but not started, on a port no other cluster has. */
async function newCluster(settings: Record<string, string> = {}): Promise<Cluster> {
  installCleanup();
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const name = `bc_${randomBytes(5).toString("hex")}`;
    undropped.add(name);
    const cluster = handle(name, port);
    await run("pg_createcluster", [
      VERSION,
      name,
      "--port",
      String(port),
      // Never started by a boot or `pg_ctlcluster ... all`, should one be left behind.
      "--start-conf",
      "manual",
      "--",
      // initdb's pg_hba.conf then trusts all users and databases, replication included.
      "--auth=trust",
    ]).catch(async (error) => {
      await cluster.drop().catch(() => undefined);
      throw error;
    });
    // Another test process may have chosen the same port at the same moment.
    const clusters = await listClusters();
    if (clusters.filter((c) => Number(c.port) === port).length === 1) {
      const config = { ...BASE_SETTINGS, ...settings };
      const lines = Object.entries(config).map(([k, v]) => `${k} = '${v.replaceAll("'", "''")}'`);
      writeFileSync(settingsFile(name), `${lines.join("\n")}\n`);
      return cluster;
    }
    await cluster.drop();
    if (attempt === 5) throw new Error(`no free port for a cluster after ${attempt} tries`);
  }
}

// pg_dropcluster removes only the files pg_createcluster made, and keeps any folder that
// still holds another: this one goes first, or /etc/postgresql/15/NAME stays behind.
const settingsFile = (name: string) =>
  `/etc/postgresql/${VERSION}/${name}/conf.d/50-test-cluster.conf`;

function handle(name: string, port: number): Cluster {
  let dropping: Promise<void> | undefined;
  const ctl = (args: string[], timeout?: number) =>
    run("pg_ctlcluster", [...CTL, ...args, VERSION, name], { timeout }).catch((error) => {
      throw withLog(name, error);
    });
  const cluster: Cluster = {
    name,
    port,
    url: (database = "postgres") =>
      `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    async start() {
      await ctl(["start"], WAIT_MS);
      await waitReady(cluster);
    },
    async stop(mode = "fast") {
      await ctl(["-m", mode, "stop"]);
    },
    async restart(mode = "fast") {
      await ctl(["-m", mode, "restart"], WAIT_MS);
      await waitReady(cluster);
    },
    async promote() {
      await ctl(["promote"], WAIT_MS);
      await waitFor(cluster, "promotion", async () => {
        return (await cluster.psql("SELECT pg_is_in_recovery()")) === "f";
      });
    },
    async psql(sql, database = "postgres") {
      const args = ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", database, "-f", "-"];
      const output = await run(`${BIN}/psql`, [...connection(port), ...args], { input: sql });
      return output.trim();
    },
    drop() {
      dropping ??= (async () => {
        // Immediate: nothing is kept, so a shutdown checkpoint would only cost time.
        await run("pg_ctlcluster", [...CTL, "-m", "immediate", VERSION, name, "stop"]).catch(
          () => undefined, // already stopped
        );
        rmSync(settingsFile(name), { force: true });
        const exists = (await listClusters()).some((c) => c.cluster === name);
        if (exists) await run("pg_dropcluster", [VERSION, name]);
        undropped.delete(name);
      })();
      return dropping;
    },
  };
  return cluster;
}

/** Replaces the standby's fresh data with a base backup of the primary, set to follow it. */
async function baseBackup(primary: Cluster, standby: Cluster): Promise<void> {
  const entry = (await listClusters()).find((c) => c.cluster === standby.name);
  if (!entry) throw new Error(`${standby.name} is not in pg_lsclusters`);
  for (const file of readdirSync(entry.pgdata)) {
    rmSync(join(entry.pgdata, file), { recursive: true, force: true });
  }
  // As the cluster's owner, so that every file it writes is the server's own.
  const args = ["-w", "-D", entry.pgdata, "-R", "-X", "stream", "--checkpoint=fast"];
  await run(`${BIN}/pg_basebackup`, [...connection(primary.port), ...args], {
    uid: entry.owneruid,
    gid: entry.ownergid,
  });
}

const connection = (port: number) => ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres"];

interface ClusterEntry {
  cluster: string;
  port: string;
  pgdata: string;
  owneruid: number;
  ownergid: number;
}

async function listClusters(): Promise<ClusterEntry[]> {
  return JSON.parse(await run("pg_lsclusters", ["--json"])) as ClusterEntry[];
}

/**
 * A random port of TEST_PORT_RANGE (20000-32000 unless set) that no cluster is configured for
 * and nothing listens on. Below Linux's ephemeral range (32768-60999), a client's outgoing
 * connection can never take the port of a cluster a test has stopped, so its start() cannot
 * then fail.
 */
async function freePort(): Promise<number> {
  const { from, to } = portRange();
  const taken = new Set((await listClusters()).map((c) => Number(c.port)));
  for (let tries = 0; tries < 50; tries++) {
    const port = randomInt(from, to + 1);
    if (!taken.has(port) && (await canListen(port))) return port;
  }
  throw new Error(`no free port in ${from}-${to} (TEST_PORT_RANGE) after 50 tries`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function waitReady(cluster: Cluster): Promise<void> {
  await waitFor(cluster, "pg_isready", async () => {
    const args = ["-q", ...connection(cluster.port), "-t", "1"];
    return run(`${BIN}/pg_isready`, args).then(
      () => true,
      () => false,
    );
  });
}

/** Resolves once `condition` holds; after WAIT_MS fails with the end of the cluster's log. */
async function waitFor(
  cluster: Cluster,
  what: string,
  condition: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw withLog(cluster.name, new Error(`timed out after ${WAIT_MS / 1000} s: ${what}`));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function withLog(name: string, error: Error): Error {
  let tail: string;
  try {
    const log = readFileSync(`/var/log/postgresql/postgresql-${VERSION}-${name}.log`, "utf8");
    tail = log.trimEnd().split("\n").slice(-20).join("\n");
  } catch {
    tail = "(no log)";
  }
  return new Error(`${name}: ${error.message}\n--- end of its log ---\n${tail}`, { cause: error });
}

// No PG* variables of the test's environment (PGCLUSTER, PGPORT...) may redirect the tools.
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PG")));

const execFileAsync = promisify(execFile);

/** A command's stdout; its stderr in the error when it fails. Asynchronous: a test's server
 * in the same process keeps serving while a cluster restarts. Exported for its own test. */
export async function run(
  command: string,
  args: string[],
  options: { input?: string; uid?: number; gid?: number; timeout?: number | undefined } = {},
): Promise<string> {
  const running = execFileAsync(command, args, {
    env: ENV,
    // A cwd the postgres user can enter: PostgreSQL's tools look up theirs.
    cwd: "/",
    encoding: "utf8",
    timeout: options.timeout ?? 60_000,
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid } : {}),
  });
  // A command that exits before it has read its input (pg_lsclusters reads none) closes the
  // pipe under the write: EPIPE then says nothing its exit status does not, and unheard it
  // would end the test process.
  running.child.stdin?.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
  if (options.input === undefined) running.child.stdin?.end();
  else running.child.stdin?.end(options.input);
  try {
    return (await running).stdout;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(" ")}: ${stderr?.trim() || message}`, {
      cause: error,
    });
  }
}
