import { StoreFullError, StoreUnavailableError } from "../store.js";

// Lock contention past busy_timeout (SQLITE_BUSY, SQLITE_LOCKED and their extended codes) is a
// passing condition, not a server fault; so is a full disk (SQLITE_FULL), whose transaction
// SQLite rolls back whole. A file that cannot be written or read (SQLITE_READONLY: its
// permissions, a file system mounted read-only; SQLITE_IOERR: the disk; SQLITE_CANTOPEN) is
// the store out of reach, as an unreachable PostgreSQL is.
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
export const SQLITE_CANTOPEN = 14;
const UNAVAILABLE = new Set([
  SQLITE_BUSY,
  SQLITE_LOCKED,
  SQLITE_READONLY,
  SQLITE_IOERR,
  SQLITE_CANTOPEN,
]);

/**
 * A lock timeout or a file out of reach becomes StoreUnavailableError and a full disk
 * StoreFullError (503s); any other error is left as it is.
 */
export function translate(error: unknown): unknown {
  const code = (error as { errcode?: unknown }).errcode;
  const primary = typeof code === "number" ? code & 0xff : undefined;
  if (primary === SQLITE_FULL) return new StoreFullError({ cause: error });
  return primary !== undefined && UNAVAILABLE.has(primary)
    ? new StoreUnavailableError({ cause: error })
    : error;
}

/** Runs a synchronous read as a store call: its result, or its error translated. */
export function withStoreErrors<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(translate(error));
  }
}
