import pg from "pg";
import { StoreFullError, StoreUnavailableError } from "../store.js";

/** A statement ended by its statement_timeout, or cancelled (statement.ts). */
export const QUERY_CANCELED = "57014";
/** A statement that waited for a lock past its lock_timeout. */
const LOCK_NOT_AVAILABLE = "55P03";
const DISK_FULL = "53100";

/**
 * PostgreSQL (or a pooler in front of it) is away, not broken: SQLSTATE class 08 (connection
 * exception), 57P (shutting down or starting), 53300 (too many connections), 25006 (read-only:
 * a standby, as during a failover). A connection that failed is StoreUnavailableError already.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  if (!(error instanceof pg.DatabaseError)) return false;
  const code = error.code ?? "";
  return code.startsWith("08") || code.startsWith("57P") || ["53300", "25006"].includes(code);
}

/**
 * PostgreSQL ended a statement past its bound (statement.ts): 57014 (its statement_timeout, or
 * cancelled), 55P03 (a lock held elsewhere past its lock_timeout). Nothing of it was applied.
 */
export const isTooSlow = (error: unknown) =>
  error instanceof pg.DatabaseError &&
  (error.code === QUERY_CANCELED || error.code === LOCK_NOT_AVAILABLE);

/**
 * A statement PostgreSQL refused, as far as a log may tell it: the SQLSTATE and the server
 * routine that raised it. Its message, detail and context are left out: they may quote the
 * statement's values (`word is too long in tsquery: "…"` quotes the search), and neither a
 * search nor a book's text belongs in a log.
 */
export class PostgresRefusedError extends Error {
  readonly code: string;
  readonly routine: string;
  constructor(error: pg.DatabaseError) {
    const [code, routine] = [error.code ?? "unknown", error.routine ?? "unknown"];
    super(`PostgreSQL refused the statement: SQLSTATE ${code} (${routine})`);
    this.name = "PostgresRefusedError";
    [this.code, this.routine] = [code, routine];
  }
}

/**
 * Runs a store call: a full disk becomes StoreFullError, a store that is away or too slow
 * StoreUnavailableError, any other refusal PostgresRefusedError; any other error (a search
 * too broad, listing.ts) is left.
 */
export async function withStoreErrors<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw error;
    if (error instanceof pg.DatabaseError && error.code === DISK_FULL) {
      throw new StoreFullError({ cause: error });
    }
    if (isUnavailable(error) || isTooSlow(error)) throw new StoreUnavailableError({ cause: error });
    throw error instanceof pg.DatabaseError ? new PostgresRefusedError(error) : error;
  }
}
