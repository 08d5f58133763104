import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { parseEnv } from "node:util";
import proxyAddr from "@fastify/proxy-addr";
import type { StreamLimits } from "./changes/stream.js";
import { sharedFolderProblem } from "./private-files.js";
import type { ChangesKept } from "./store/changes.js";
import { parsePostgresUrl } from "./store/postgres/url.js";

export type DbTarget =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly url: string };

export interface Config {
  readonly production: boolean;
  readonly host: string;
  readonly port: number;
  /** Where Prometheus metrics are served; off when undefined. */
  readonly metricsPort: number | undefined;
  /** The address metrics listen on: loopback unless widened on purpose. */
  readonly metricsHost: string;
  readonly db: DbTarget;
  readonly username: string;
  readonly password: string;
  /** True outside production when neither credential is set: the pair is public knowledge. */
  readonly developmentCredentials: boolean;
  readonly secret: string;
  /** Problems worth a warning at start-up, such as default credentials. */
  readonly warnings: readonly string[];
  readonly bodyLimit: number;
  readonly loginMaxFailures: number;
  readonly loginWindowSeconds: number;
  /** Where instances share the failed-login counts; each instance counts alone when unset. */
  readonly rateLimitRedisUrl: string | undefined;
  readonly shutdownTimeoutMs: number;
  /** After SIGTERM, how long /ready answers 503 while requests are still served. */
  readonly shutdownDrainMs: number;
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** Open client connections at most; a new one past it is closed at once. */
  readonly maxConnections: number;
  /** Open connections one client may hold (http/connections.ts says who is one client). */
  readonly maxConnectionsPerClient: number;
  /** How much of the change log is kept (CHANGES_KEEP_DAYS, CHANGES_KEEP). */
  readonly changesKept: ChangesKept;
  /** A direct or session-pooled PostgreSQL address to LISTEN for changes on. */
  readonly changesListenUrl: string | undefined;
  /** How often a process reads the log for its streams whatever it is told. */
  readonly changesPollMs: number;
  /** The bounds of GET /changes as a stream (CHANGES_STREAMS…). */
  readonly changeStreams: StreamLimits;
  /** Requests of one connection handled at once; its further ones wait, unread. */
  readonly maxPipelinedRequests: number;
  /** Requests of one client handled at once over all its connections; further ones wait. */
  readonly maxRequestsInFlightPerClient: number;
  /** How long a connection may sit idle between two requests before it is closed. */
  readonly keepAliveTimeoutMs: number;
  readonly pgPoolSize: number;
  /** How long a PostgreSQL statement, or the wait for a connection, may take before 503. */
  readonly dbTimeoutMs: number;
  /** Named prepared statements on PostgreSQL; off behind a transaction pooler. */
  readonly dbPreparedStatements: boolean;
  /** Server processes on the one port: 1 serves from this process alone. */
  readonly workers: number;
  readonly logLevel: string;
  /** false, or the proxies' addresses; `true` only outside production. */
  readonly trustProxy: boolean | string;
  /** Scheduled snapshots of the catalogue (BACKUP_DIR); off when undefined. */
  readonly backups: BackupSchedule | undefined;
}

export interface BackupSchedule {
  readonly dir: string;
  readonly intervalSeconds: number;
  /** How many snapshots the folder keeps; older ones are removed. */
  readonly keep: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration: ${problems.join("; ")}`);
    this.name = "ConfigError";
  }
}

export const SUPPORTED_DB_URLS =
  "sqlite:<path>, sqlite://<path>, file:<path>, sqlite::memory:, postgres://…, postgresql://…";

/** Where the catalogue lives when DB_URL is unset (outside production). */
export const DEFAULT_DB_URL = "sqlite:./data/books.db";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
const MIN_SECRET_BYTES = 32;

/**
 * Adds the settings of a `.env` file, when there is one, to the environment. A variable the
 * environment already has keeps its value.
 */
export function loadEnvFile(path = ".env", env: NodeJS.ProcessEnv = process.env): void {
  if (!existsSync(path)) return;
  for (const [name, value] of Object.entries(parseEnv(readFileSync(path, "utf8")))) {
    if (env[name] === undefined) env[name] = value;
  }
}

/**
 * Reads the environment once and returns a frozen Config, or throws a ConfigError that
 * lists every problem at once. No secret value appears in a problem's text.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const warnings: string[] = [];
  const { read, integer, boolean } = readersOf(env, problems);

  const production = env.NODE_ENV === "production";
  const required = (name: string, devDefault: string): string => {
    const value = read(name);
    if (value !== undefined) return value;
    if (production) problems.push(`${name} is required when NODE_ENV=production`);
    return devDefault;
  };

  const { username, password, secret } = readSecrets(
    read,
    required,
    production,
    warnings,
    problems,
  );

  const rawDbUrl = read("DB_URL");
  if (rawDbUrl === undefined && production) {
    problems.push("DB_URL is required when NODE_ENV=production");
  }
  const db = parseDbUrl(rawDbUrl ?? DEFAULT_DB_URL, problems);

  const workers = readWorkers(read("WORKERS"), integer, db, problems);
  const logLevel = read("LOG_LEVEL") ?? "info";
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  }

  const config: Config = {
    production,
    // A pair everyone knows is for this machine alone until HOST says otherwise.
    host: read("HOST") ?? (developmentPair(read, production) ? "127.0.0.1" : "0.0.0.0"),
    port: integer("PORT", 8080, 0, 65535),
    metricsPort:
      read("METRICS_PORT") === undefined ? undefined : integer("METRICS_PORT", 0, 1, 65535),
    // Request counts and process details are for the operator, not for the network.
    metricsHost: read("METRICS_HOST") ?? "127.0.0.1",
    db,
    username,
    password,
    developmentCredentials:
      !production && read("AUTH_USERNAME") === undefined && read("AUTH_PASSWORD") === undefined,
    secret,
    warnings,
    loginMaxFailures: integer("LOGIN_MAX_FAILURES", 10, 1, 1_000_000),
    loginWindowSeconds: integer("LOGIN_WINDOW_SECONDS", 60, 1, 86_400),
    rateLimitRedisUrl: read("RATE_LIMIT_REDIS_URL"),
    ...readHttpLimits(integer),
    pgPoolSize: integer("PG_POOL_SIZE", 2, 1, 100),
    dbTimeoutMs: integer("DB_TIMEOUT_SECONDS", 5, 1, 600) * 1000,
    dbPreparedStatements: boolean("DB_PREPARED_STATEMENTS", true),
    workers,
    logLevel,
    trustProxy: parseTrustProxy(read("TRUST_PROXY"), production, problems, warnings),
    backups: readBackupSchedule(read, integer, db, problems),
    changesKept: {
      days: integer("CHANGES_KEEP_DAYS", 30, 1, 36_500),
      // A change of every book of a catalogue of a million.
      entries: integer("CHANGES_KEEP", 1_000_000, 1, 1_000_000_000),
    },
    changesListenUrl: readListenUrl(read("CHANGES_LISTEN_URL"), db, problems),
    changesPollMs: integer("CHANGES_POLL_SECONDS", 1, 1, 3600) * 1000,
    changeStreams: {
      // A school's 40 pages behind one address, within MAX_CONNECTIONS_PER_CLIENT (100).
      perClient: integer("CHANGES_STREAMS_PER_CLIENT", 50, 1, 1_000_000),
      total: integer("CHANGES_STREAMS", 1000, 1, 1_000_000),
      // Under nginx's default proxy_read_timeout (60 s) and most balancers' idle timeouts.
      heartbeatMs: integer("CHANGES_HEARTBEAT_SECONDS", 15, 1, 3600) * 1000,
      maxBufferedBytes: 1024 * 1024,
      accountCheckMs: 2_000,
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

type IntegerReader = ReturnType<typeof readersOf>["integer"];

/** CHANGES_LISTEN_URL: a postgres:// address, only with a PostgreSQL DB_URL. */
function readListenUrl(
  url: string | undefined,
  db: Config["db"],
  problems: string[],
): string | undefined {
  if (url === undefined) return undefined;
  if (db.kind !== "postgres") {
    problems.push("CHANGES_LISTEN_URL is for a PostgreSQL DB_URL: SQLite needs none");
    return undefined;
  }
  const address = /^postgres(ql)?:\/\//.test(url) ? parsePostgresUrl(url) : undefined;
  if (address === undefined || "problem" in address) {
    problems.push("CHANGES_LISTEN_URL must be a postgres:// URL (direct or session-pooled)");
  }
  return url;
}

/** WORKERS: a number, or `auto` for one worker per core this process may use. */
function readWorkers(
  value: string | undefined,
  integer: IntegerReader,
  db: Config["db"],
  problems: string[],
): number {
  const workers = value === "auto" ? availableParallelism() : integer("WORKERS", 1, 1, 256);
  if (workers > 1 && db.kind === "sqlite" && db.path === ":memory:") {
    problems.push(
      "WORKERS above 1 needs a database file or PostgreSQL: sqlite::memory: lives in one process",
    );
  }
  return workers;
}

/** The bounds on what clients may send and hold: bodies, time, connections, pipelining. */
function readHttpLimits(integer: IntegerReader) {
  return {
    bodyLimit: integer("BODY_LIMIT_BYTES", 64 * 1024, 1024, 16 * 1024 * 1024),
    shutdownTimeoutMs: integer("SHUTDOWN_TIMEOUT_SECONDS", 10, 0, 3600) * 1000,
    shutdownDrainMs: integer("SHUTDOWN_DRAIN_SECONDS", 0, 0, 300) * 1000,
    requestTimeoutMs: integer("REQUEST_TIMEOUT_SECONDS", 30, 1, 3600) * 1000,
    headersTimeoutMs: integer("HEADERS_TIMEOUT_SECONDS", 10, 1, 3600) * 1000,
    // Fits the common limit of 1,024 descriptors, with room for the store, Redis and logs.
    maxConnections: integer("MAX_CONNECTIONS", 800, 1, 1_000_000),
    // So that no one client, and no crowd of idle connections, holds every place for long.
    maxConnectionsPerClient: integer("MAX_CONNECTIONS_PER_CLIENT", 100, 1, 1_000_000),
    // A pipelining client gains nothing past a few requests ahead; each one handled holds its
    // answer in memory, and a file's answer a descriptor, until the client reads it.
    maxPipelinedRequests: integer("MAX_PIPELINED_REQUESTS", 16, 1, 1_000_000),
    // Above MAX_CONNECTIONS_PER_CLIENT (100): one request at a time on each connection never waits.
    maxRequestsInFlightPerClient: integer("MAX_REQUESTS_IN_FLIGHT_PER_CLIENT", 128, 1, 1_000_000),
    keepAliveTimeoutMs: integer("KEEP_ALIVE_TIMEOUT_SECONDS", 5, 1, 3600) * 1000,
  };
}

/** Readers of the environment's variables; a value out of form adds to `problems`. */
function readersOf(env: NodeJS.ProcessEnv, problems: string[]) {
  // An empty variable counts as unset, as it does in most .env files.
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === "" ? undefined : value;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return value;
  };
  const boolean = (name: string, fallback: boolean): boolean => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (raw !== "true" && raw !== "false") problems.push(`${name} must be true or false`);
    return raw === "true";
  };
  return { read, integer, boolean };
}

/** BACKUP_DIR, BACKUP_INTERVAL_SECONDS and BACKUP_KEEP; undefined when BACKUP_DIR is unset. */
function readBackupSchedule(
  read: (name: string) => string | undefined,
  integer: (name: string, fallback: number, min: number, max: number) => number,
  db: DbTarget,
  problems: string[],
): BackupSchedule | undefined {
  const dir = read("BACKUP_DIR");
  const intervalSeconds = integer("BACKUP_INTERVAL_SECONDS", 86_400, 1, 366 * 86_400);
  const keep = integer("BACKUP_KEEP", 7, 1, 10_000);
  if (dir === undefined) {
    // A schedule without its folder is a typo or a forgotten line: no backup would ever run.
    for (const name of ["BACKUP_INTERVAL_SECONDS", "BACKUP_KEEP"]) {
      if (read(name) !== undefined)
        problems.push(`${name} needs BACKUP_DIR, the folder for the backups`);
    }
    return undefined;
  }
  if (db.kind === "sqlite" && db.path === ":memory:") {
    problems.push(
      "BACKUP_DIR needs a database file or PostgreSQL: sqlite::memory: cannot be read from outside",
    );
  }
  // Others who may write the folder could plant a file or a link under a backup's name.
  const shared = sharedFolderProblem("BACKUP_DIR", dir);
  if (shared !== undefined) problems.push(shared);
  return { dir, intervalSeconds, keep };
}

/** True outside production while either credential falls back to its well-known default. */
function developmentPair(read: (name: string) => string | undefined, production: boolean) {
  return (
    !production && (read("AUTH_USERNAME") === undefined || read("AUTH_PASSWORD") === undefined)
  );
}

/** The credentials and the token secret: required in production, development defaults else. */
function readSecrets(
  read: (name: string) => string | undefined,
  required: (name: string, devDefault: string) => string,
  production: boolean,
  warnings: string[],
  problems: string[],
) {
  const username = required("AUTH_USERNAME", "admin");
  const password = required("AUTH_PASSWORD", "password");
  if (developmentPair(read, production)) {
    const where = read("HOST") === undefined ? "listening on 127.0.0.1 only: " : "";
    warnings.push(
      `using the development credentials: ${where}set AUTH_USERNAME and AUTH_PASSWORD before exposing the service`,
    );
  }

  let secret = read("SECRET_TOKEN");
  if (secret === undefined) {
    if (production) problems.push("SECRET_TOKEN is required when NODE_ENV=production");
    else {
      warnings.push(
        "SECRET_TOKEN is not set: signing with a random secret, so tokens die with the process",
      );
    }
    secret = randomBytes(MIN_SECRET_BYTES).toString("base64url");
  } else if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
    problems.push(`SECRET_TOKEN must be at least ${MIN_SECRET_BYTES} bytes long`);
  }

  return { username, password, secret };
}

export function parseDbUrl(url: string, problems: string[]): DbTarget {
  if (url === "sqlite::memory:") return { kind: "sqlite", path: ":memory:" };
  for (const prefix of ["sqlite://", "sqlite:", "file://", "file:"]) {
    if (url.startsWith(prefix)) {
      const path = url.slice(prefix.length);
      if (path === "") problems.push(`DB_URL names no file; supported forms: ${SUPPORTED_DB_URLS}`);
      return { kind: "sqlite", path };
    }
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const address = parsePostgresUrl(url);
    if ("problem" in address) problems.push(address.problem);
    return { kind: "postgres", url };
  }
  // Only the scheme is echoed: the rest may hold a password.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? "(none)";
  problems.push(
    `DB_URL has an unsupported form (scheme ${scheme}); supported forms: ${SUPPORTED_DB_URLS}`,
  );
  return { kind: "sqlite", path: ":memory:" };
}

/** The store's address for log lines and errors: never the password. */
export function describeDb(target: DbTarget): string {
  if (target.kind === "sqlite") return `sqlite:${target.path}`;
  const address = parsePostgresUrl(target.url);
  return "problem" in address ? "postgres://…" : address.description;
}

const TRUST_PROXY_FORM = "list the proxies' addresses or CIDRs (TRUST_PROXY=10.0.0.5,10.0.1.0/24)";

/**
 * A comma-separated list of proxy addresses or CIDRs: X-Forwarded-For is read from the right,
 * past those proxies only. `true` believes the leftmost entry, which the client writes itself,
 * so any client could choose its address and escape the login limit: refused in production,
 * a warning elsewhere. A hop count is refused: it would believe a client that reaches the
 * service directly, and Fastify ignores it anyway (it trusts no proxy then).
 */
function parseTrustProxy(
  raw: string | undefined,
  production: boolean,
  problems: string[],
  warnings: string[],
): boolean | string {
  if (raw === undefined || raw === "false") return false;
  if (/^\d+$/.test(raw)) {
    problems.push(`TRUST_PROXY does not take a hop count; ${TRUST_PROXY_FORM}`);
    return false;
  }
  if (raw !== "true") {
    const problem = trustProxyListProblem(raw);
    if (problem !== undefined) problems.push(`${problem}; ${TRUST_PROXY_FORM}`);
    return problem === undefined ? raw : false;
  }
  if (production) {
    problems.push(`TRUST_PROXY=true lets clients choose their address; ${TRUST_PROXY_FORM}`);
  } else {
    warnings.push(
      `TRUST_PROXY=true lets clients choose their address (X-Forwarded-For): ${TRUST_PROXY_FORM}`,
    );
  }
  return true;
}

/** What is wrong with a list of proxies, as the one-line configuration error says it. */
function trustProxyListProblem(raw: string): string | undefined {
  const entries = raw.split(",").map((entry) => entry.trim());
  const everyone = entries.find((entry) => /\/0+$/.test(entry));
  if (everyone !== undefined) {
    return `TRUST_PROXY has "${everyone}", which would let every client choose its address`;
  }
  try {
    // As Fastify will read it: a list it would refuse is a configuration error, not a crash.
    proxyAddr.compile(entries);
    return undefined;
  } catch (error) {
    return `TRUST_PROXY: ${(error as Error).message}`;
  }
}
