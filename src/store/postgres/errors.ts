import { SearchTooBroadError, StoreUnavailableError } from "../store.js";

// Node socket errors, postgres.js connection errors, and SQLSTATE classes 08 (connection
// exception) and 57P (server shutting down or starting): the store is away, not broken.
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "53300",
]);
const QUERY_CANCELED = "57014";

export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return false;
  return UNAVAILABLE_CODES.has(code) || code.startsWith("08") || code.startsWith("57P");
}

/**
 * Runs a store call: a cancelled statement (a search past its time limit) becomes
 * SearchTooBroadError, a store that is away StoreUnavailableError; any other error is left.
 */
export async function withStoreErrors<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if ((error as { code?: unknown }).code === QUERY_CANCELED) {
      throw new SearchTooBroadError({ cause: error });
    }
    throw isUnavailable(error) ? new StoreUnavailableError({ cause: error }) : error;
  }
}
