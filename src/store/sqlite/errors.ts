import { StoreFullError, StoreUnavailableError } from "../store.js";

// Lock contention past busy_timeout (SQLITE_BUSY, SQLITE_LOCKED and their extended codes) is a
// passing condition, not a server fault; so is a full disk (SQLITE_FULL), whose transaction
// SQLite rolls back whole.
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_FULL = 13;

/**
 * A lock timeout becomes StoreUnavailableError and a full disk StoreFullError (503s); any
 * other error is left as it is.
 */
export function translate(error: unknown): unknown {
  const code = (error as { errcode?: unknown }).errcode;
  const primary = typeof code === "number" ? code & 0xff : undefined;
  if (primary === SQLITE_FULL) return new StoreFullError({ cause: error });
  return primary === SQLITE_BUSY || primary === SQLITE_LOCKED
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
