import sql from "sql-template-tag";
import type { Queryable } from "./pool.js";

const ignore = () => {};

/** What validates the kept reads, and the order of the read that found it. */
export interface Validator {
  /** The catalogue's generation, its commit count and its latest change stamp, as one text. */
  version: string;
  /** Rises with every read: a later read saw every commit an earlier one saw. */
  read: number;
}

/**
 * What validates what the store keeps (migrations 5 and 6): the catalogue's generation, a
 * random token made with the schema and replaced by a restore; the count of commits that
 * changed books, a counter per backend slot bumped by a statement trigger, which shows a commit
 * exactly when its rows show; and the highest change stamp, from a sequence, which never comes
 * back after a counter has gone down and up again (a failover that lost commits). Any change,
 * up or down, is a new version. Reads that arrive together share one query, but never one that
 * began before they arrived: such a read waits for the next query, so it sees every commit
 * answered before it. Under load this is one small query per round trip, not one per request
 * (see docs/performance.md).
 */
export interface CommitCounter {
  /** The version now, by a query that begins after the call (shared with others waiting). */
  latest(): Promise<Validator>;
}

/** The version as one statement's snapshot sees it: a scalar subquery. */
const VERSION = sql`(SELECT (SELECT token FROM catalogue_generation) || ':'
    || coalesce(sum(commits), 0) || ':' || coalesce(max(stamp), 0)
  FROM books_changes)`;

export function createCommitCounter(db: Queryable): CommitCounter {
  let reading: Promise<Validator> | undefined;
  let nextRead: Promise<Validator> | undefined;
  let reads = 0;
  const readVersion = async (): Promise<Validator> => {
    const read = ++reads;
    const [row] = await db.query<{ version: string }>(sql`SELECT ${VERSION} AS version`);
    return { version: row?.version ?? "", read };
  };
  function latest(): Promise<Validator> {
    if (reading === undefined) {
      reading = readVersion().finally(() => {
        reading = undefined;
      });
      return reading;
    }
    nextRead ??= reading.then(ignore, ignore).then(() => {
      nextRead = undefined;
      return latest();
    });
    return nextRead;
  }
  return { latest };
}
