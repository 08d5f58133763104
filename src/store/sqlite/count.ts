// How many books match a listing's filters, whatever the page: read in the counter's thread
// (a search's count reads every match, hundreds of milliseconds at a few hundred thousand
// books), or on this thread for a database in memory.
import type { DatabaseSync } from "node:sqlite";
import { withDeadline } from "../deadline.js";
import {
  type BookFilters,
  SearchTooBroadError,
  StoreUnavailableError,
  searchTimeLeft,
} from "../store.js";
import { withStoreErrors } from "./errors.js";
import { preparedByShape } from "./listing.js";
import { failure, type Outcome, settle } from "./outcome.js";
import { matchExpression } from "./search-index.js";
import { countSql, filterParameters } from "./sql.js";
import { openThreadChannel } from "./thread-channel.js";

/** A count and the time (Date.now()) past which it is no longer wanted. */
export interface CountRequest {
  filters: BookFilters;
  deadline: number;
}

export interface Counter {
  count(filters: BookFilters): Promise<number>;
  close(): Promise<void>;
}

/** Counts on `db`, one statement per shape of filters. */
export function countStatements(db: DatabaseSync): (filters: BookFilters) => number {
  const statementFor = preparedByShape(db);
  return (filters) => {
    const shape = {
      search: filters.search !== undefined && filters.search.length > 0,
      author: filters.author !== undefined,
      year: filters.year !== undefined,
    };
    const parameters = filterParameters(filters);
    if (shape.search) parameters.match = matchExpression(filters.search ?? []);
    return (statementFor(countSql, shape).get(parameters) as { count: number }).count;
  };
}

/**
 * The outcome of each count in the counter's thread; one no longer wanted is not read: its
 * time went in waiting for the counts before it, the store's time, not its own.
 */
export function answerCounts(count: (filters: BookFilters) => number, requests: CountRequest[]) {
  return requests.map((request): Outcome => {
    if (Date.now() > request.deadline) {
      return { failed: "unavailable", message: "the counter's thread was busy with other counts" };
    }
    try {
      return { value: count(request.filters) };
    } catch (error) {
      return failure(error);
    }
  });
}

/**
 * The counter for the file at `path`: counts are read in a thread of their own, so the event
 * loop never waits for one, and the thread skips the counts whose time has passed. An answer
 * not back within what is left of the search's `limitMs` is the search's own cost when the
 * thread had nothing else to count (too broad, as it would be on an idle store), and the
 * store's when counts sent before it were still being read (503: the thread was busy).
 */
export function threadCounter(path: string, limitMs: number): Counter {
  const channel = openThreadChannel<CountRequest>("count-thread", path);
  /** The counts sent and not yet answered, in the order they were sent. */
  const inFlight = new Set<object>();
  return {
    async count(filters) {
      const left = searchTimeLeft(filters.searchStarted, limitMs);
      const ahead = [...inFlight];
      const mine = {};
      inFlight.add(mine);
      const answer = channel.send({ filters, deadline: Date.now() + left });
      const answered = () => inFlight.delete(mine);
      answer.then(answered, answered);
      const late = () =>
        ahead.some((other) => inFlight.has(other))
          ? new StoreUnavailableError({ cause: new Error("the counter's thread was busy") })
          : new SearchTooBroadError();
      return settle(await withDeadline(answer, left, late)) as number;
    },
    close: channel.close,
  };
}

/** The counter for a database in memory, on this thread. */
export function localCounter(db: DatabaseSync, limitMs: number): Counter {
  const count = countStatements(db);
  return {
    count: (filters) =>
      withStoreErrors(() => {
        searchTimeLeft(filters.searchStarted, limitMs);
        return count(filters);
      }),
    close: async () => {},
  };
}
