import { StoreUnavailableError } from "../store.js";

// Lock contention past busy_timeout (SQLITE_BUSY, SQLITE_LOCKED and their extended codes) is a
// passing condition, not a server fault.
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

/** A lock timeout becomes StoreUnavailableError (a 503); any other error is left as it is. */
export function translate(error: unknown): unknown {
  const code = (error as { errcode?: unknown }).errcode;
  const primary = typeof code === "number" ? code & 0xff : undefined;
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
