// The change log on PostgreSQL. Entries are written by the book writes themselves (books.ts),
// in their statement; their sequence order is their commit order (the lock of book writes,
// statement.ts), so a follower reading `seq > since` misses none.
import sql, { raw } from "sql-template-tag";
import {
  CHANGE_COLUMNS,
  type ChangeLog,
  type ChangeRow,
  ChangesGoneError,
  type ChangesKept,
  changeOf,
  keptCutoff,
  trimThrough,
} from "../changes.js";
import { withStoreErrors } from "./errors.js";
import { listenForChanges } from "./listen.js";
import type { Db, Queryable } from "./pool.js";

const COLUMNS = raw(CHANGE_COLUMNS);
const LATEST = raw(
  "greatest(coalesce((SELECT max(seq) FROM changes), 0), changes_kept.trimmed_through)",
);

/** The change log of `db`. */
export function postgresChangeLog(db: Db, listenUrl?: string): ChangeLog {
  return {
    ...(listenUrl === undefined
      ? {}
      : { watch: (onChange, onTrouble) => listenForChanges(listenUrl, onChange, onTrouble) }),
    list: (since, limit) =>
      withStoreErrors(async () => {
        // One statement, one snapshot: the entries are read with the trim that removed any
        // before them, never without it (as SQLite reads them first, then the trim).
        const rows = await db.query<ChangeRow & { trimmed: number }>(sql`WITH page AS (
            SELECT ${COLUMNS} FROM changes WHERE seq > ${since} ORDER BY seq LIMIT ${limit}
          )
          SELECT changes_kept.trimmed_through AS trimmed, page.*
          FROM changes_kept LEFT JOIN page ON true ORDER BY page.seq`);
        const trimmed = rows[0]?.trimmed ?? 0;
        if (since < trimmed) throw new ChangesGoneError(trimmed + 1);
        return rows.filter((row) => row.seq !== null).map(changeOf);
      }),
    // A book's entries by its chain (migration 13): from its newest, the book's last_change
    // or its delete's, down `previous` to `since` or to an entry trimmed; each step a lookup
    // by primary key, all in one statement, so one snapshot.
    history: (id, since, limit) =>
      withStoreErrors(async () =>
        (
          await db.query<ChangeRow>(sql`WITH RECURSIVE chain(seq) AS (
              SELECT coalesce((SELECT last_change FROM books WHERE id = ${id}),
                (SELECT last_change FROM deleted_books WHERE id = ${id}))
              UNION ALL
              SELECT c.previous FROM chain JOIN changes c ON c.seq = chain.seq
              WHERE chain.seq > ${since}
            )
            SELECT ${COLUMNS} FROM changes
            WHERE seq IN (SELECT seq FROM chain) AND seq > ${since} ORDER BY seq LIMIT ${limit}`)
        ).map(changeOf),
      ),
    latest: () =>
      withStoreErrors(async () => {
        const [row] = await db.query<{ latest: number }>(
          sql`SELECT ${LATEST} AS latest FROM changes_kept`,
        );
        return row?.latest ?? 0;
      }),
    trim: (kept) => withStoreErrors(() => db.transaction((tx) => trimChanges(tx, kept))),
  };
}

/**
 * Removes what `kept` no longer keeps, a slice at most (trimThrough), as SQLite's trim does.
 * Trims of several instances take turns on changes_kept's row.
 */
async function trimChanges(tx: Queryable, kept: ChangesKept): Promise<number> {
  await tx.query(sql`SELECT FROM changes_kept FOR UPDATE`);
  const [row] = await tx.query<{ newest: number; young: number | null; first: number | null }>(
    sql`SELECT ${LATEST} AS newest,
      (SELECT seq FROM changes WHERE at >= ${keptCutoff(kept)}::bigint ORDER BY seq LIMIT 1)
        AS young,
      (SELECT seq FROM changes ORDER BY seq LIMIT 1) AS first
    FROM changes_kept`,
  );
  if (row === undefined) return 0;
  const first = row.first ?? row.newest + 1;
  const through = trimThrough(kept, row.newest, row.young ?? undefined, first);
  if (through < first) return 0;
  const [removed] = await tx.query<{ n: number }>(sql`WITH gone AS (
      DELETE FROM changes WHERE seq <= ${through} RETURNING 1
    ), kept AS (
      UPDATE changes_kept SET trimmed_through = ${through}
    ), forgotten AS (
      -- A deleted book whose delete entry is trimmed can no longer be restored (404).
      DELETE FROM deleted_books WHERE last_change <= ${through}
    )
    SELECT count(*)::bigint AS n FROM gone`);
  return removed?.n ?? 0;
}

/**
 * A backup restore's: the log starts again, empty, and every sequence given so far answers
 * 410, the newest too (a client that had read everything must read the catalogue again): the
 * log is trimmed through a sequence no entry had, and the next entry is numbered after it.
 * Inside the restore's transaction.
 */
export async function restartChangeLog(tx: Queryable): Promise<void> {
  const sequence = raw("pg_get_serial_sequence('changes', 'seq')");
  await tx.query(sql`WITH gone AS (DELETE FROM changes), forgotten AS (DELETE FROM deleted_books)
    UPDATE changes_kept
    SET trimmed_through = setval(${sequence}, greatest(${LATEST} + 1, nextval(${sequence})))`);
}
