import pg from "pg";
import { SearchTooBroadError, StoreUnavailableError } from "../store.js";

const QUERY_CANCELED = "57014";

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
 * Runs a store call: a cancelled statement (a search past its time limit) becomes
 * SearchTooBroadError, a store that is away StoreUnavailableError; any other error is left.
 */
export async function withStoreErrors<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof pg.DatabaseError && error.code === QUERY_CANCELED) {
      throw new SearchTooBroadError({ cause: error });
    }
    if (error instanceof StoreUnavailableError) throw error;
    throw isUnavailable(error) ? new StoreUnavailableError({ cause: error }) : error;
  }
}
