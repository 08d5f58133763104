import type postgres from "postgres";

const ignore = () => {};

/**
 * The count of commits that changed books (migration 5: a counter per backend slot, bumped by
 * a statement trigger), which validates what the store keeps. Reads that arrive together
 * share one query, but never one that began before they arrived: such a read waits for the
 * next query, so it sees every commit answered before it. Under load this is one small query
 * per round trip, not one per request (see docs/performance.md).
 */
export function createCommitCounter(sql: postgres.Sql): () => Promise<number> {
  let reading: Promise<number> | undefined;
  let nextRead: Promise<number> | undefined;
  const readCommits = async () => {
    const [row] = await sql<{ commits: number }[]>`
      SELECT coalesce(sum(commits), 0)::bigint AS commits FROM books_changes`;
    return row?.commits ?? 0;
  };
  function latestCommits(): Promise<number> {
    if (reading === undefined) {
      reading = readCommits().finally(() => {
        reading = undefined;
      });
      return reading;
    }
    nextRead ??= reading.then(ignore, ignore).then(() => {
      nextRead = undefined;
      return latestCommits();
    });
    return nextRead;
  }
  return latestCommits;
}
