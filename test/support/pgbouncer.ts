// A pgbouncer of the test's own in front of the tests' PostgreSQL (TEST_DATABASE_URL's host,
// port and user): its own port, its own files in a temporary folder, and never the machine's
// /etc/pgbouncer.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { testDatabaseUrl } from "./pg.js";
import { freePort } from "./service.js";

const PGBOUNCER = process.env.PGBOUNCER_PATH || "/usr/sbin/pgbouncer";
// pgbouncer refuses to run as root; as root (CI) it is told to become this user, whose
// PostgreSQL account the auth file names.
const RUN_AS = "postgres";

/** A PostgreSQL server as pgbouncer logs in to it. */
export interface PgbouncerServer {
  host: string;
  port: number;
  /** The user clients log in as, and pgbouncer as them: postgres unless given. */
  user?: string;
  /** The user's password on the server, if it asks for one. */
  password?: string;
}

export interface Pgbouncer {
  /** A postgres:// URL through the pooler to this database (default "test"), as its user. */
  url(database?: string): string;
  /**
   * PAUSE one database (or all) through the admin console: resolves once pgbouncer has let go
   * of its server connections, after which every new query waits until resume(). In session
   * mode a server connection is let go only when its client disconnects, so close pools first.
   */
  pause(database?: string): Promise<void>;
  resume(database?: string): Promise<void>;
  /** Stops the process and removes its files. Safe to call twice. */
  stop(): Promise<void>;
}

export interface PgbouncerOptions {
  poolMode: "transaction" | "session";
  /** default_pool_size: server connections per database and user; 10 unless given. */
  poolSize?: number;
  /** The PostgreSQL it pools for: TEST_DATABASE_URL's (testDatabaseServer()) unless given. */
  server?: PgbouncerServer;
  /**
   * [pgbouncer] settings over the test's defaults (pool_mode and the pool size included): a
   * shipped pgbouncer.ini's, say. Where it listens, its auth and its files stay the test's.
   */
  settings?: Record<string, string>;
}

/**
 * The host, port, user and password of a postgres:// URL (TEST_DATABASE_URL or its default
 * unless given), with PostgreSQL's defaults for what it leaves out.
 */
export function testDatabaseServer(url: string = testDatabaseUrl()): Required<PgbouncerServer> {
  const parsed = new URL(url);
  return {
    // An IPv6 address comes in brackets, which pgbouncer's host= does not take.
    host: decodeURIComponent(parsed.hostname).replace(/^\[(.*)\]$/, "$1") || "127.0.0.1",
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username) || "postgres",
    password: decodeURIComponent(parsed.password),
  };
}

/**
 * Whether pgbouncer tests can run: false when they can, else the reason to skip. Under CI=true
 * a missing pgbouncer is an error, never a skip.
 */
export function pgbouncerSkipReason(): string | false {
  if (existsSync(PGBOUNCER)) return false;
  const reason = `pgbouncer tests skipped: no pgbouncer at ${PGBOUNCER} (apt-get install pgbouncer)`;
  if (process.env.CI === "true") throw new Error(`${reason}; under CI=true they must run`);
  return reason;
}

// Every pgbouncer still running, killed when this process exits however a test ended, so that
// none is left behind holding a port and server connections.
const running = new Map<ChildProcess, string>();
process.on("exit", () => {
  for (const [child, dir] of running) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

/** What the pooler does with its connections: a test's defaults, or the settings it gives. */
function poolSettings(options: PgbouncerOptions): Record<string, string> {
  return {
    pool_mode: options.poolMode,
    default_pool_size: String(options.poolSize ?? 10),
    max_client_conn: "1000",
    // pgbouncer refuses a client whose startup packet carries a parameter it does not track,
    // and drivers send these (node-postgres sends `options` from its URL). Accepted, they are
    // dropped, never applied: a URL from freshPostgresSchema() reaches the public schema here.
    ignore_startup_parameters: "extra_float_digits,options,search_path",
    // In transaction mode a server connection changes hands after every transaction and the
    // reset query never runs; in session mode it cleans up after one client for the next.
    server_reset_query: options.poolMode === "session" ? "DISCARD ALL" : "",
    // A PAUSE that lands while a server connection is still logging in counts as a failed
    // login, and pgbouncer then waits this long before it connects again: 15 s by default,
    // which after resume() would hold up the next query for 15 s.
    server_login_retry: "0.1",
    ...options.settings,
  };
}

/** The server it pools for, every field filled. */
function serverOf(options: PgbouncerOptions): Required<PgbouncerServer> {
  const server = options.server ?? testDatabaseServer();
  return { user: "postgres", password: "", ...server };
}

/** A libpq connection string's value, quoted where it has to be. */
const connValue = (value: string) =>
  /^[^\s'\\]+$/.test(value) ? value : `'${value.replace(/['\\]/g, "\\$&")}'`;

/** pgbouncer.ini for a pgbouncer listening on `port`, its files in `dir`. */
export function pgbouncerIni(dir: string, port: number, options: PgbouncerOptions): string {
  const server = serverOf(options);
  // Where it listens, who it lets in and where its files go are always the test's own.
  const own: Record<string, string> = {
    listen_addr: "127.0.0.1",
    listen_port: String(port),
    // No socket in /tmp, where it could meet another pgbouncer's.
    unix_socket_dir: "",
    // Trust still looks the user up: the auth file must list it, with any password.
    auth_type: "trust",
    auth_file: join(dir, "users.txt"),
    admin_users: server.user,
    logfile: join(dir, "pgbouncer.log"),
    pidfile: join(dir, "pgbouncer.pid"),
  };
  const settings = { ...poolSettings(options), ...own };
  return [
    "[databases]",
    // Any database name the client asks for goes to the same name on the server.
    `* = host=${connValue(server.host)} port=${server.port}`,
    "[pgbouncer]",
    ...Object.entries(settings).map(([key, value]) => `${key} = ${value}`),
    "",
  ].join("\n");
}

/** The last lines of what pgbouncer said, for an error message. */
function tail(file: string): string {
  const text = existsSync(file) ? readFileSync(file, "utf8").trimEnd() : "";
  return text === "" ? "(nothing)" : text.split("\n").slice(-15).join("\n");
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** The child, once it accepts connections on the port; its output file's tail if it never does. */
async function launch(dir: string, port: number, options: PgbouncerOptions) {
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(ini, pgbouncerIni(dir, port, options));
  const asRoot = process.getuid?.() === 0;
  // pgbouncer also logs to stderr, and only there what goes wrong before its logfile opens.
  const stderr = join(dir, "stderr.log");
  const fd = openSync(stderr, "w");
  const child = spawn(PGBOUNCER, [...(asRoot ? ["-u", RUN_AS] : []), ini], {
    stdio: ["ignore", "ignore", fd],
  });
  closeSync(fd);
  // A test that forgets stop() should still end; the exit hook above then kills this.
  child.unref();
  running.set(child, dir);
  // Why it never listened, once that is known.
  let failure: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      failure = `pgbouncer exited (${signal ?? `code ${code}`})`;
      resolve();
    });
    // A binary that cannot be run at all, which never emits "exit".
    child.once("error", (error) => {
      failure = `pgbouncer could not be started: ${error.message}`;
      resolve();
    });
  });
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (failure === undefined && Date.now() > deadline) {
      failure = "pgbouncer did not accept connections within 10 s";
      child.kill("SIGKILL");
    }
    if (failure !== undefined) {
      await exited;
      running.delete(child);
      return { child: undefined, exited, failure: `${failure}; it said:\n${tail(stderr)}` };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, exited, failure: "" };
}

/** One command through the admin console, which has to answer within 10 s. */
async function admin(port: number, user: string, command: string): Promise<void> {
  const client = new pg.Client({ host: "127.0.0.1", port, user, database: "pgbouncer" });
  await client.connect();
  let timer: NodeJS.Timeout | undefined;
  try {
    // No parameters, so pg sends a simple query: the admin console knows no other protocol.
    const answered = client.query(command);
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), 10_000);
    });
    if ((await Promise.race([answered, late])) === "late") {
      answered.catch(() => {});
      throw new Error(`pgbouncer did not answer ${command} within 10 s`, { cause: "late" });
    }
  } finally {
    clearTimeout(timer);
    await client.end();
  }
}

/**
 * PAUSE, which returns only once no query holds a server connection. A session-mode client
 * holds one until it disconnects, so a test that left one open would wait for ever: instead it
 * fails, and the database is resumed so that the rest of the test can still use it.
 */
async function pause(port: number, user: string, database: string | undefined): Promise<void> {
  try {
    await admin(port, user, database ? `PAUSE ${database}` : "PAUSE");
  } catch (error) {
    if ((error as Error).cause !== "late") throw error;
    await admin(port, user, database ? `RESUME ${database}` : "RESUME").catch(() => {});
    throw new Error(
      `${(error as Error).message}: a client still holds a server connection (in session mode, until it disconnects)`,
    );
  }
}

/** A pgbouncer listening on a free port on 127.0.0.1, with its files in a folder of its own. */
export async function startPgbouncer(options: PgbouncerOptions): Promise<Pgbouncer> {
  const dir = mkdtempSync(join(tmpdir(), "pgbouncer-"));
  if (process.getuid?.() === 0) {
    // The logfile and pidfile are written after pgbouncer has become that user.
    const id = (flag: string) => Number(execFileSync("id", [flag, RUN_AS], { encoding: "utf8" }));
    chownSync(dir, id("-u"), id("-g"));
  }
  // Its password, if any, is the one pgbouncer logs in to the server with.
  const { user, password } = serverOf(options);
  const quoted = (text: string) => `"${text.replaceAll('"', '""')}"`;
  writeFileSync(join(dir, "users.txt"), `${quoted(user)} ${quoted(password)}\n`);
  // Another process may take the free port before pgbouncer binds it; then try another.
  let started: Awaited<ReturnType<typeof launch>> | undefined;
  let port = 0;
  for (let attempt = 1; attempt <= 3 && !started?.child; attempt++) {
    port = await freePort();
    started = await launch(dir, port, options);
    if (!started.child && !started.failure.includes("Address already in use")) break;
  }
  const { child, exited, failure } = started as Awaited<ReturnType<typeof launch>>;
  if (!child) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(failure);
  }
  let stopping: Promise<void> | undefined;
  return {
    url: (database = "test") =>
      `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    pause: (database) => pause(port, user, database),
    resume: (database) => admin(port, user, database ? `RESUME ${database}` : "RESUME"),
    stop: () => {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          // SIGTERM makes pgbouncer 1.18 exit at once. From 1.23 the first one waits for every
          // client to disconnect and a second exits at once; SIGKILL if even that hangs.
          child.kill("SIGTERM");
          const timers = [
            setTimeout(() => child.kill("SIGTERM"), 1_000),
            setTimeout(() => child.kill("SIGKILL"), 5_000),
          ];
          await exited;
          for (const timer of timers) clearTimeout(timer);
        }
        running.delete(child);
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
