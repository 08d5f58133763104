// The connections to PostgreSQL, through node-postgres (docs/performance.md, "The PostgreSQL
// driver", says why this driver): every wait bounded, a connection in an unknown state never
// reused, named prepared statements only when asked for, the primary found among several hosts.
import pg from "pg";
import type { Sql } from "sql-template-tag";
import { withDeadline } from "../deadline.js";
import { StoreUnavailableError } from "../store.js";
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
  query<R = Record<string, unknown>>(statement: Sql | string): Promise<R[]>;
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
  const names = new Map<string, string>();
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

  const statement = (query: Sql | string): pg.QueryConfig | string => {
    if (typeof query === "string") return query;
    if (!options.preparedStatements) return { text: query.text, values: query.values };
    let name = names.get(query.text);
    if (name === undefined && names.size < MAX_NAMED) {
      name = `bc_${names.size}`;
      names.set(query.text, name);
    }
    return { name, text: query.text, values: query.values };
  };
  const run = <R>(client: pg.PoolClient, query: Sql | string, timeoutMs = options.timeoutMs) =>
    bounded(client.query(statement(query) as string), timeoutMs).then(
      (result) => result.rows as R[],
    );

  /** `work` on one connection, which is dropped, never reused, when its state is unknown. */
  async function withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect().catch((error: unknown) => {
      refind();
      throw new StoreUnavailableError({ cause: error });
    });
    let lost: unknown;
    try {
      return await work(client);
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

  return {
    query: (query) => withClient((client) => run(client, query)),
    transaction: (work, { mode = "", timeoutMs } = {}) =>
      withClient(async (client) => {
        await run(client, `BEGIN ${mode}`);
        try {
          const result = await work({ query: (query) => run(client, query, timeoutMs) });
          await run(client, "COMMIT");
          return result;
        } catch (error) {
          // The connection goes back to the pool only out of its transaction.
          if (!connectionLost(error)) {
            await run(client, "ROLLBACK").catch(() => {
              throw new StoreUnavailableError({ cause: error });
            });
          }
          throw error;
        }
      }),
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
