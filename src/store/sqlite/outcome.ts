// What a store call run in another thread came to, as it crosses back: errors do not cross
// threads whole, so they cross as the kind the routes answer by.
import { BookExistsError } from "../changes.js";
import {
  BookChangedError,
  BookIdsExhaustedError,
  SearchTooBroadError,
  StoreFullError,
  StoreUnavailableError,
} from "../store.js";
import { translate } from "./errors.js";

// A value of undefined (an update that found no book) crosses JSON (the workers' socket to
// the writer) as an outcome with neither key: whatever has no failure is a value.
export type Outcome =
  | { value?: unknown }
  | {
      failed:
        | "changed"
        | "exists"
        | "unavailable"
        | "full"
        | "ids exhausted"
        | "too broad"
        | "error";
      message?: string;
    };

/** The outcome of an error thrown by a store call. */
export function failure(error: unknown): Outcome {
  const translated = translate(error);
  if (translated instanceof StoreFullError) return { failed: "full" };
  if (translated instanceof StoreUnavailableError) {
    // Why, for the log: a lock held elsewhere, a file that cannot be written.
    return { failed: "unavailable", message: String((error as Error).message) };
  }
  return { failed: "error", message: (translated as Error).message };
}

/** The result the caller gets: the outcome's value, or the error it names. */
export function settle(outcome: Outcome): unknown {
  if (!("failed" in outcome)) return outcome.value;
  if (outcome.failed === "changed") throw new BookChangedError();
  if (outcome.failed === "exists") throw new BookExistsError();
  if (outcome.failed === "unavailable") {
    const cause = outcome.message === undefined ? undefined : new Error(outcome.message);
    throw new StoreUnavailableError(cause && { cause });
  }
  if (outcome.failed === "full") throw new StoreFullError();
  if (outcome.failed === "ids exhausted") throw new BookIdsExhaustedError();
  if (outcome.failed === "too broad") throw new SearchTooBroadError();
  throw new Error(outcome.message);
}
