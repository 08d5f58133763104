// One statement on one connection, bounded in PostgreSQL itself and, past its bound, cancelled
// there: a statement the service gave up on is never applied later, and leaves no backend
// working behind it.
import pg from "pg";
import { withDeadline } from "../deadline.js";
import { StoreUnavailableError } from "../store.js";

/**
 * Sets the statement's bounds for its transaction only (set_config's `true`): so they hold
 * through a pooler in transaction mode, and nothing stays on the connection after. It returns
 * no row, so its answer is only its CommandComplete.
 */
const SET_BOUNDS = `SELECT WHERE (set_config('statement_timeout', $1, true)
  || set_config('lock_timeout', $2, true)) IS NULL`;
const BOUNDS_NAME = "bc_bounds";

/**
 * The first key of the lock every instance that writes books of one catalogue takes; the
 * second is the hash of the catalogue's schema (`current_schema()`), so catalogues in other
 * schemas of the database never wait for it.
 */
export const BOOK_WRITES_LOCK = 0x626b7772; // "bkwr"

/**
 * SET_BOUNDS, then the lock of book writes (`||` evaluates left to right, so the lock's wait
 * is bounded by lock_timeout). An entry's sequence is given when it is inserted, not when it
 * commits: were two book writes to run at once, the later number could commit first, and a
 * follower that read it (`seq > since`) would miss the earlier one. Taken first in every
 * transaction that writes books, before any row lock, it makes sequence order commit order
 * across instances, and deadlocks none.
 */
const SET_BOUNDS_LOCKING = `SELECT WHERE (set_config('statement_timeout', $1, true)
  || set_config('lock_timeout', $2, true)
  || pg_advisory_xact_lock(${BOOK_WRITES_LOCK}, hashtext(current_schema()))::text)
  IS NULL`;
const BOUNDS_LOCKING_NAME = "bc_bounds_locking";

/** How long after its bound the service stops waiting and cancels a statement itself. */
const CANCEL_AFTER_MS = 200;
/** How long a cancelled statement's answer (done, or cancelled) is awaited before giving up. */
const CANCEL_GRACE_MS = 400;

/**
 * A statement preceded, in the same round trip and the same implicit transaction (one Sync), by
 * SET_BOUNDS: PostgreSQL ends it with SQLSTATE 57014 (a lock wait with 55P03) once `timeoutMs`
 * have passed, even when the service can no longer reach it. Costs no round trip. With
 * `lockBookWrites`, SET_BOUNDS_LOCKING instead.
 */
class BoundedQuery extends pg.Query {
  readonly #bounds: string[];
  readonly #boundsText: string;
  readonly #boundsName: string;
  #boundsAnswered = false;
  /** Its named statement was parsed in this round trip: if it fails, whether it exists is unknown. */
  #parsing = false;
  #parsingBounds = false;
  namedStatementUnknown = false;

  constructor(
    config: pg.QueryConfig,
    timeoutMs: number,
    lockTimeoutMs: number,
    lockBookWrites: boolean,
  ) {
    super({ ...config, queryMode: "extended" } as pg.QueryConfig);
    this.#bounds = [String(timeoutMs), String(lockTimeoutMs)];
    this.#boundsText = lockBookWrites ? SET_BOUNDS_LOCKING : SET_BOUNDS;
    this.#boundsName = lockBookWrites ? BOUNDS_LOCKING_NAME : BOUNDS_NAME;
  }

  override prepare(connection: Internal["connection"]): void {
    // Named, and so parsed once a connection, beside named statements only: a pooler in
    // transaction mode would lose it.
    const name = this.name === undefined ? "" : this.#boundsName;
    this.#parsingBounds = name === "" || connection.parsedStatements[name] === undefined;
    if (this.#parsingBounds) connection.parse({ text: this.#boundsText, name });
    connection.bind({ portal: "", statement: name, values: this.#bounds });
    connection.execute({ portal: "", rows: 0 });
    this.#parsing = this.name !== undefined && !this.hasBeenParsed(connection);
    super.prepare(connection);
  }

  override handleReadyForQuery(connection: Internal["connection"]): void {
    if (this.#parsingBounds && this.name !== undefined) {
      connection.parsedStatements[this.#boundsName] = this.#boundsText;
    }
    super.handleReadyForQuery(connection);
  }

  override handleCommandComplete(message: unknown, connection: Internal["connection"]): void {
    // The first CommandComplete is the bounds'; the statement's own result follows it.
    if (!this.#boundsAnswered) {
      this.#boundsAnswered = true;
      return;
    }
    super.handleCommandComplete(message, connection);
  }

  override handleError(error: Error, connection: Internal["connection"]): void {
    // The driver counts a named statement as parsed from the first ParseComplete of the round
    // trip, which here is SET_BOUNDS's: the connection cannot tell whether it exists.
    if (this.#parsing || (this.#parsingBounds && this.name !== undefined)) {
      this.namedStatementUnknown = true;
    }
    super.handleError(error, connection);
  }
}

/** What node-postgres keeps inside its Query and Client, used here. */
interface Internal {
  connection: {
    parsedStatements: Record<string, string>;
    parse(config: { text: string; name: string }): void;
    bind(config: { portal: string; statement: string; values: string[] }): void;
    execute(config: { portal: string; rows: number }): void;
  };
}
declare module "pg" {
  interface Query {
    name?: string;
    callback?: (error: Error | null, result: pg.QueryResult) => void;
    prepare(connection: Internal["connection"]): void;
    hasBeenParsed(connection: Internal["connection"]): boolean;
    handleCommandComplete(message: unknown, connection: Internal["connection"]): void;
    handleError(error: Error, connection: Internal["connection"]): void;
    handleReadyForQuery(connection: Internal["connection"]): void;
  }
}

/** The outcome of one statement, and whether its connection may be used again. */
export interface Ran<R> {
  rows?: R[];
  error?: unknown;
  /** A cancel was sent, or the statement's state on the connection is unknown. */
  dropConnection: boolean;
}

/**
 * Runs `query` on `client`: a statement with values (or one that must be bounded) as a
 * BoundedQuery, taking the lock of book writes first with `lockBookWrites`; a script of
 * several without values as it is. Past `timeoutMs` (and a little more, which PostgreSQL's
 * own bound normally takes first) it is cancelled and its answer awaited CANCEL_GRACE_MS
 * longer: an answer that comes is its outcome, done or not; none means the connection is lost
 * (StoreUnavailableError), and the statement is still ended by its own bound in PostgreSQL.
 */
export async function runStatement<R>(
  client: pg.PoolClient,
  query: pg.QueryConfig | string,
  timeoutMs: number,
  lockTimeoutMs = timeoutMs,
  lockBookWrites = false,
): Promise<Ran<R>> {
  let submitted: pg.Query | undefined;
  let pending: Promise<pg.QueryResult>;
  if (typeof query === "string" && !lockBookWrites) {
    pending = client.query(query);
  } else {
    const config = typeof query === "string" ? { text: query } : query;
    const bounded = new BoundedQuery(config, timeoutMs, lockTimeoutMs, lockBookWrites);
    submitted = bounded;
    pending = new Promise((resolve, reject) => {
      bounded.callback = (error, result) => (error ? reject(error) : resolve(result));
    });
    client.query(bounded);
  }
  const outcome = (result: pg.QueryResult) => ({ rows: result.rows as R[] });
  const lost = new Error("no answer");
  try {
    const result = await withDeadline(pending, timeoutMs + CANCEL_AFTER_MS, () => lost);
    return { ...outcome(result), dropConnection: false };
  } catch (error) {
    if (error !== lost) {
      const unknown = submitted instanceof BoundedQuery && submitted.namedStatementUnknown;
      return { error, dropConnection: unknown };
    }
  }
  // The service gives up: PostgreSQL is asked to end the statement, and its answer decides.
  cancelOnServer(client);
  try {
    const result = await withDeadline(pending, CANCEL_GRACE_MS, () => lost);
    return { ...outcome(result), dropConnection: true };
  } catch (error) {
    const cause = error === lost ? new Error(`no answer in ${timeoutMs} ms`) : error;
    return { error: new StoreUnavailableError({ cause }), dropConnection: true };
  }
}

/**
 * A CancelRequest for the statement `client` is running, on a connection of its own to the
 * same server (a pooler passes it on to its server connection). The server ends that
 * connection once it has read the request.
 */
function cancelOnServer(client: pg.PoolClient): void {
  const { host, port, processID, secretKey } = client as unknown as {
    host: string;
    port: number;
    processID: number;
    secretKey: number;
  };
  const connection = new pg.Connection() as pg.Connection & {
    connect(port: number | string, host?: string): void;
    cancel(processID: number, secretKey: number): void;
  };
  connection.on("error", () => {});
  connection.once("connect", () => connection.cancel(processID, secretKey));
  if (host.startsWith("/")) connection.connect(`${host}/.s.PGSQL.${port}`);
  else connection.connect(port, host);
  setTimeout(() => connection.stream.destroy(), CANCEL_GRACE_MS).unref();
}
