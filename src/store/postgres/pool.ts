// The connections to PostgreSQL, through node-postgres (docs/performance.md, "The PostgreSQL
// driver", says why this driver): every wait bounded, a connection in an unknown state never
// reused, named prepared statements only when asked for, the primary found among several hosts.
import pg from "pg";
import type { Sql } from "sql-template-tag";
import { withDeadline } from "../deadline.js";
import { StoreUnavailableError } from "../store.js";
import { runStatement } from "./statement.js";
import type { PostgresAddress } from "./url.js";

export interface PoolOptions {
  poolSize: number;
  /** How long a statement, or the wait for a connection, may take before 503. */
  timeoutMs: number;
  /** Named statements, parsed once a connection; off behind a transaction pooler. */
  preparedStatements: boolean;
  applicationName: string;
}

/** Runs statements: SQL built with sql-template-tag, or a script of several without values. */
export interface Queryable {
  query<R = Record<string, unknown>>(statement: Sql, bounds?: Bounds): Promise<R[]>;
  /**
   * A script goes as it is: the service ends it at the pool's or transaction's bound, but
   * PostgreSQL keeps the statement_timeout of the statement before it, so it takes no bounds
   * of its own. One statement that needs them: `raw(text)`.
   */
  query<R = Record<string, unknown>>(script: string): Promise<R[]>;
}

/** A statement's bounds in PostgreSQL, where they are not its pool's or transaction's. */
export interface Bounds {
  /** The pool's or transaction's unless given. */
  timeoutMs?: number;
  /** How long it may wait for a lock (55P03 past it); `timeoutMs` unless given. */
  lockTimeoutMs?: number;
  /**
   * A statement that writes books: it takes their lock (statement.ts) before it runs, in the
   * same round trip. Its transaction's first statement must be one.
   */
  lockBookWrites?: boolean;
}

export interface Db extends Queryable {
  /** `work` in one transaction (`BEGIN mode`), on one connection. */
  transaction<T>(work: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  end(): Promise<void>;
}

export interface TransactionOptions {
  /** What follows BEGIN: an isolation level, READ ONLY. */
  mode?: string;
  /** Each statement's bound, where it is not the pool's (a migration, a restore). */
  timeoutMs?: number;
  /**
   * Settings for the transaction only (SET LOCAL), sent with its BEGIN: constants of the
   * code, never a request's values.
   */
  settings?: Record<string, string>;
}

/** Named statements at most, so that SQL built from many filters cannot fill memory. */
const MAX_NAMED = 500;
/** Looking for the primary again after a failure: at most once in this many ms. */
const REFIND_INTERVAL_MS = 1_000;

/** BIGINT as a number: ids travel as JSON numbers and stay below 2^53 (see parseBookId). */
export const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === pg.types.builtins.INT8
      ? Number
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * A pool on the primary of `address`: the first host that answers (and, for read-write,
 * takes writes). When a connection fails, the hosts are tried again, so that after a
 * failover the service reaches the new primary by itself.
 */
export async function openDb(address: PostgresAddress, options: PoolOptions): Promise<Db> {
  let host = await findPrimary(address, options);
  let pool = newPool(host, options);
  let refinding: Promise<void> | undefined;
  let lastRefind = 0;
  let ending: Promise<void> | undefined;

  /** After a connection failure: the primary may have moved. */
  function refind(): void {
    if (address.hosts.length === 1 || refinding || ending) return;
    if (Date.now() - lastRefind < REFIND_INTERVAL_MS) return;
    lastRefind = Date.now();
    refinding = findPrimary(address, options)
      .then((found) => {
        if (found === host) return;
        const old = pool;
        [host, pool] = [found, newPool(found, options)];
        void old.end().catch(() => {});
      }, ignore)
      .finally(() => {
        refinding = undefined;
      });
  }

  const statement = statementsOf(options.preparedStatements);
  /** Runs statements on `client`, each bounded (statement.ts), `drop` told when it must go. */
  const runner =
    (client: pg.PoolClient, drop: () => void, defaultMs = options.timeoutMs): Run =>
    (query, bounds) =>
      run(client, statement(query), drop, {
        timeoutMs: bounds?.timeoutMs ?? defaultMs,
        lockTimeoutMs: bounds?.lockTimeoutMs ?? bounds?.timeoutMs ?? defaultMs,
        lockBookWrites: bounds?.lockBookWrites ?? false,
      });

  const withClient = <T>(work: OnConnection<T>) => onConnection(pool, refind, work);

  return {
    query: (query: Sql | string, bounds?: Bounds) =>
      withClient((client, drop) => runner(client, drop)(query, bounds)),
    transaction: (work, { mode = "", timeoutMs, settings = {} } = {}) =>
      withClient((client, drop) =>
        inTransaction(
          { edges: runner(client, drop), statements: runner(client, drop, timeoutMs) },
          work,
          `BEGIN ${mode}`,
          settings,
        ),
      ),
    // Once, however often asked; connections still in use after a few seconds are left to
    // close with the process.
    end() {
      ending ??= (async () => {
        await refinding;
        await Promise.race([pool.end(), new Promise((done) => setTimeout(done, 5_000).unref())]);
      })();
      return ending;
    },
  };
}

const ignore = () => {};

type OnConnection<T> = (client: pg.PoolClient, drop: () => void) => Promise<T>;

/**
 * `work` on one connection of `pool`, which is dropped, never reused, when its state is
 * unknown: it failed, a cancel was sent on it, or a named statement may or may not exist on
 * it. `refind` is told when the primary may have moved.
 */
async function onConnection<T>(
  pool: pg.Pool,
  refind: () => void,
  work: OnConnection<T>,
): Promise<T> {
  const client = await pool.connect().catch((error: unknown) => {
    refind();
    throw new StoreUnavailableError({ cause: error });
  });
  let lost: unknown;
  try {
    return await work(client, () => {
      lost ??= new Error("the connection's state is unknown");
    });
  } catch (error) {
    if (connectionLost(error)) lost = error;
    // A lost connection, or a server that no longer takes writes: the primary may have moved.
    if (lost !== undefined || isReadOnly(error)) refind();
    throw error;
  } finally {
    client.release(lost === undefined ? undefined : (lost as Error));
    if (lost !== undefined) client.connection.stream.destroy();
  }
}

type Run = <R = Record<string, unknown>>(query: Sql | string, bounds?: Bounds) => Promise<R[]>;

/** Statements as node-postgres takes them: named, when asked for, up to MAX_NAMED of them. */
function statementsOf(prepared: boolean): (query: Sql | string) => pg.QueryConfig | string {
  const names = new Map<string, string>();
  return (query) => {
    if (typeof query === "string") return query;
    if (!prepared) return { text: query.text, values: query.values };
    let name = names.get(query.text);
    if (name === undefined && names.size < MAX_NAMED) {
      name = `bc_${names.size}`;
      names.set(query.text, name);
    }
    return { name, text: query.text, values: query.values };
  };
}

/** One statement on `client` (statement.ts); `drop` is told when the connection must go. */
async function run<R>(
  client: pg.PoolClient,
  query: pg.QueryConfig | string,
  drop: () => void,
  { timeoutMs, lockTimeoutMs, lockBookWrites }: Required<Bounds>,
): Promise<R[]> {
  const ran = await runStatement<R>(client, query, timeoutMs, lockTimeoutMs, lockBookWrites);
  if (ran.dropConnection) drop();
  if (ran.error === undefined) return ran.rows as R[];
  // PostgreSQL's own errors carry a SQLSTATE; anything else is the connection failing.
  throw ran.error instanceof pg.DatabaseError || ran.error instanceof StoreUnavailableError
    ? ran.error
    : new StoreUnavailableError({ cause: ran.error });
}

/**
 * `work` between `begin` (with the transaction's settings, in the same round trip) and COMMIT,
 * or ROLLBACK when it fails: those under the pool's bound, `work`'s under the transaction's.
 */
async function inTransaction<T>(
  run: { edges: Run; statements: Run },
  work: (tx: Queryable) => Promise<T>,
  begin: string,
  settings: Record<string, string>,
): Promise<T> {
  const set = Object.entries(settings).map(([name, value]) => `; SET LOCAL ${name} = ${value}`);
  await run.edges(`${begin}${set.join("")}`);
  try {
    const result = await work({ query: run.statements });
    await run.edges("COMMIT");
    return result;
  } catch (error) {
    // The connection goes back to the pool only out of its transaction.
    if (!connectionLost(error)) {
      await run.edges("ROLLBACK").catch(() => {
        throw new StoreUnavailableError({ cause: error });
      });
    }
    throw error;
  }
}

/** A pool on one host whose connections can never take the process down with an error. */
function newPool(connectionString: string, options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: options.timeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: options.applicationName,
    types,
  });
  // An idle connection's error (the server restarted) is the pool's to drop; one in use also
  // fails its statement, which answers 503. Neither may reach the process as an 'error' event.
  pool.on("error", ignore);
  pool.on("connect", (client) => client.on("error", ignore));
  return pool;
}

/** The first host that answers and, when the address asks for it, takes writes. */
async function findPrimary(address: PostgresAddress, options: PoolOptions): Promise<string> {
  let lastError: unknown;
  for (const host of address.hosts) {
    if (address.hosts.length === 1 && !address.readWrite) return host;
    const client = new pg.Client({
      connectionString: host,
      connectionTimeoutMillis: options.timeoutMs,
      application_name: options.applicationName,
    });
    client.on("error", ignore);
    try {
      await bounded(client.connect(), options.timeoutMs);
      const [row] = (await bounded(client.query("SHOW transaction_read_only"), options.timeoutMs))
        .rows;
      if (!address.readWrite || row?.transaction_read_only === "off") return host;
      lastError = new Error("the server takes no writes (a standby)");
    } catch (error) {
      lastError = error;
    } finally {
      void client.end().catch(ignore);
    }
  }
  throw new StoreUnavailableError({ cause: lastError });
}

/** The statement failed with its connection: that connection's state is unknown. */
function connectionLost(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  if (!(error instanceof pg.DatabaseError)) return false;
  const code = error.code ?? "";
  // Class 08 (connection exception) and 57P (the server shutting down, or this session ended).
  return code.startsWith("08") || code.startsWith("57P");
}

/** PostgreSQL refused a write as read-only: a standby, or a primary demoted. */
const isReadOnly = (error: unknown) => error instanceof pg.DatabaseError && error.code === "25006";

/** `work`, or StoreUnavailableError once `timeoutMs` have passed; a driver error is one too. */
async function bounded<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  const late = () =>
    new StoreUnavailableError({ cause: new Error(`no answer in ${timeoutMs} ms`) });
  try {
    return await withDeadline(work, timeoutMs, late);
  } catch (error) {
    // PostgreSQL's own errors carry a SQLSTATE; anything else is the connection failing.
    throw error instanceof pg.DatabaseError || error instanceof StoreUnavailableError
      ? error
      : new StoreUnavailableError({ cause: error });
  }
}
