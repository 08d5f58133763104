// The topology of docs/topology.md brought up on 127.0.0.1 from the files in deploy/: redis,
// a PostgreSQL primary and its streaming standby, a pgbouncer in front of each, three
// instances of the service and haproxy before them. Whatever it starts is stopped by
// cleanUp(), or killed as the process exits, however it ends.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Cluster, createPrimaryWithStandby } from "../test/support/clusters.js";
import {
  haproxyConfig,
  PGBOUNCER_INI,
  POSTGRESQL_CONF,
  readRepositoryFile,
  settingsOf,
} from "../test/support/deploy.js";
import { type Pgbouncer, startPgbouncer } from "../test/support/pgbouncer.js";
import { freePort, type Service, startService } from "../test/support/service.js";

export const HAPROXY = process.env.HAPROXY_PATH || "/usr/sbin/haproxy";

export const CREDENTIALS = { username: "librarian", password: "topology-password-5d1e" };
export const LOGIN_MAX_FAILURES = 10;
const DB_PASSWORD = "pw";

// Undone last first by cleanUp(); the processes also killed at exit should that never run.
const undo: { what: string; run: () => Promise<unknown> }[] = [];
const children = new Set<ChildProcess>();
const folders = new Set<string>();

export function onCleanup(what: string, run: () => Promise<unknown>): void {
  undo.push({ what, run });
}

/** Kills every process this file started and removes its folders, at once: for exit. */
export function killEverythingSync(): void {
  for (const child of children) child.kill("SIGKILL");
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
}
process.on("exit", killEverythingSync);

/** Undoes every step, newest first, each within 30 s; a step that fails does not stop the rest. */
export async function cleanUp(): Promise<void> {
  for (let step = undo.pop(); step; step = undo.pop()) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("did not finish within 30 s")), 30_000);
    });
    await Promise.race([step.run(), late]).catch((error: Error) =>
      console.error(`topology: cleaning up ${step.what}: ${error.message}`),
    );
    clearTimeout(timer);
  }
  killEverythingSync();
}

export function tempFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), "book-topology-"));
  folders.add(dir);
  return dir;
}

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Stops a child with SIGTERM, SIGKILL after 5 s; resolves once it has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Resolves once `check` holds, checking every 100 ms; fails after `ms`. */
export async function waitUntil(what: string, ms: number, check: () => Promise<boolean>) {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A redis-server of its own: a free port, no persistence, its files in `dir`. */
export async function startRedis(dir: string): Promise<string> {
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  const child = track(
    spawn("redis-server", [...args, "--dir", dir], { stdio: ["ignore", "ignore", "inherit"] }),
  );
  onCleanup("redis", () => stopChild(child));
  await waitUntil("redis answering PING", 10_000, () => redisPing(port));
  return `redis://127.0.0.1:${port}`;
}

function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * The primary and its standby, both with deploy/postgresql/book-catalogue.conf, synchronous
 * unless told, and the empty database `catalogue` (which the standby replicates).
 */
export async function startDatabases(synchronous: boolean) {
  const settings = settingsOf(readRepositoryFile(POSTGRESQL_CONF));
  const pair = await createPrimaryWithStandby({ synchronous, settings });
  onCleanup("the PostgreSQL clusters", () => pair.drop());
  await pair.primary.psql("CREATE DATABASE catalogue");
  return pair;
}

/**
 * One pgbouncer before each cluster, with the [pgbouncer] settings of deploy/pgbouncer/
 * pgbouncer.ini; the test helper keeps its own listen address, port, files and trust auth,
 * and sends every database name to its cluster.
 */
export async function startPgbouncers(clusters: Cluster[]): Promise<Pgbouncer[]> {
  const settings = settingsOf(readRepositoryFile(PGBOUNCER_INI), "pgbouncer");
  const poolMode = settings.pool_mode;
  if (poolMode !== "transaction") throw new Error(`${PGBOUNCER_INI}: pool_mode ${poolMode}`);
  return Promise.all(
    clusters.map(async (cluster) => {
      const server = { host: "127.0.0.1", port: cluster.port };
      const pgbouncer = await startPgbouncer({ poolMode, server, settings });
      onCleanup("a pgbouncer", () => pgbouncer.stop());
      return pgbouncer;
    }),
  );
}

/** The database URL the instances get: each pgbouncer, or one PostgreSQL straight. */
export function databaseUrl(hosts: { port: number }[]): string {
  const list = hosts.map((host) => `127.0.0.1:${host.port}`).join(",");
  return `postgres://postgres:${DB_PASSWORD}@${list}/catalogue`;
}

export const portOf = (url: string) => Number(new URL(url).port);

export interface Instance {
  port: number;
  service: Service | undefined;
  env: Record<string, string>;
}

/** The environment every instance shares, as an operator would set it for this topology. */
export function instanceEnv(redisUrl: string): Record<string, string> {
  return {
    NODE_ENV: "production",
    HOST: "127.0.0.1",
    WORKERS: "1",
    SECRET_TOKEN: "topology-secret-shared-by-every-instance-0123456789",
    AUTH_USERNAME: CREDENTIALS.username,
    AUTH_PASSWORD: CREDENTIALS.password,
    TRUST_PROXY: "127.0.0.1",
    RATE_LIMIT_REDIS_URL: redisUrl,
    LOGIN_MAX_FAILURES: String(LOGIN_MAX_FAILURES),
    DB_TIMEOUT_SECONDS: "2",
    // Longer than haproxy takes to see /ready fail (fall 2 × inter 1 s), so that no request
    // reaches a port about to close.
    SHUTDOWN_DRAIN_SECONDS: "3",
  };
}

/** Starts (or starts again) one instance on its port; stopped by cleanUp() in any case. */
export async function startInstance(instance: Instance): Promise<void> {
  const service = await startService(
    { ...instance.env, PORT: String(instance.port) },
    { direct: true },
  );
  track(service.process);
  instance.service = service;
}

/** Three instances on ports of their own, not started yet. */
export async function newInstances(env: Record<string, string>): Promise<Instance[]> {
  const instances: Instance[] = [];
  for (let i = 0; i < 3; i++) instances.push({ port: await freePort(), service: undefined, env });
  onCleanup("the instances", () =>
    Promise.all(instances.map((instance) => instance.service?.stop("SIGTERM"))),
  );
  return instances;
}

export interface Haproxy {
  url: string;
  socket: string;
}

export async function startHaproxy(dir: string, servers: number[]): Promise<Haproxy> {
  const port = await freePort();
  const socket = join(dir, "haproxy.sock");
  const path = join(dir, "haproxy.cfg");
  writeFileSync(path, haproxyConfig(port, servers, socket));
  // -db: in the foreground, its log lines (server state changes) to a file for a post-mortem.
  const child = track(spawn(HAPROXY, ["-db", "-f", path], { stdio: ["ignore", "pipe", "pipe"] }));
  const log = createWriteStream(join(dir, "haproxy.log"));
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  onCleanup("haproxy", () => stopChild(child));
  const url = `http://127.0.0.1:${port}`;
  await waitUntil("haproxy answering /ready", 10_000, async () => {
    if (child.exitCode !== null) throw new Error(`haproxy exited with code ${child.exitCode}`);
    return (await fetch(`${url}/ready`)).status === 200;
  });
  return { url, socket };
}
