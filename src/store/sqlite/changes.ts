// The change log on SQLite. Entries are written by the book writes themselves (books.ts), in
// their group's transaction; reads use the store's own connection, as a read of one book does;
// a trim is the writer's, a slice at a time, as any write is.
import type { DatabaseSync } from "node:sqlite";
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
import { writeStatement } from "./schema.js";

const LATEST = `SELECT max(coalesce((SELECT max(seq) FROM changes), 0), trimmed_through) AS latest
  FROM changes_kept`;

/** The change log `db` reads; `trim` hands a trim to the store's writer. */
export function sqliteChangeLog(
  db: DatabaseSync,
  trim: (kept: ChangesKept) => Promise<number>,
): ChangeLog {
  const afterStmt = db.prepare(
    `SELECT ${CHANGE_COLUMNS} FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`,
  );
  // A book's entries by its chain (migration 13): from its newest, the book's last_change or
  // its delete's, down `previous` to `since` or to an entry trimmed; each step a lookup by
  // primary key, all in one statement, so one snapshot.
  const historyStmt = db.prepare(
    `WITH RECURSIVE chain(seq) AS (
      SELECT coalesce((SELECT last_change FROM books WHERE id = ?1),
        (SELECT last_change FROM deleted_books WHERE id = ?1))
      UNION ALL
      SELECT c.previous FROM chain JOIN changes c ON c.seq = chain.seq WHERE chain.seq > ?2
    )
    SELECT ${CHANGE_COLUMNS} FROM changes
    WHERE seq IN (SELECT seq FROM chain) AND seq > ?2 ORDER BY seq LIMIT ?3`,
  );
  const trimmedStmt = db.prepare("SELECT trimmed_through AS n FROM changes_kept");
  const latestStmt = db.prepare(LATEST);
  return {
    list: (since, limit) =>
      withStoreErrors(() => {
        const rows = afterStmt.all(since, limit) as unknown as ChangeRow[];
        // Read after the entries: a trim between the two is then seen, never missed.
        const trimmed = trimmedStmt.get()?.n as number;
        if (since < trimmed) throw new ChangesGoneError(trimmed + 1);
        return rows.map(changeOf);
      }),
    history: (id, since, limit) =>
      withStoreErrors(() =>
        (historyStmt.all(id, since, limit) as unknown as ChangeRow[]).map(changeOf),
      ),
    latest: () => withStoreErrors(() => latestStmt.get()?.latest as number),
    trim,
  };
}

/** The trim of the writer's connection `db`, inside its group's transaction. */
export function changeTrimming(db: DatabaseSync) {
  const latestStmt = db.prepare(LATEST);
  const firstStmt = db.prepare("SELECT seq FROM changes ORDER BY seq LIMIT 1");
  const youngStmt = db.prepare("SELECT seq FROM changes WHERE at >= ? ORDER BY seq LIMIT 1");
  const removeStmt = writeStatement(db, "DELETE FROM changes WHERE seq <= ?");
  const trimmedStmt = writeStatement(db, "UPDATE changes_kept SET trimmed_through = ?");
  // A deleted book whose delete entry is trimmed can no longer be restored (404).
  const forgetStmt = writeStatement(db, "DELETE FROM deleted_books WHERE last_change <= ?");
  return (kept: ChangesKept): number => {
    const newest = latestStmt.get()?.latest as number;
    const young = youngStmt.get(keptCutoff(kept))?.seq as number | undefined;
    const first = (firstStmt.get()?.seq as number | undefined) ?? newest + 1;
    const through = trimThrough(kept, newest, young, first);
    if (through < first) return 0;
    const removed = Number(removeStmt.run(through).changes);
    trimmedStmt.run(through);
    forgetStmt.run(through);
    return removed;
  };
}

/**
 * A restore's: the log starts again, empty, and every sequence given so far answers 410, the
 * newest too (a client that had read everything must read the catalogue again): the log is
 * trimmed through a sequence no entry had, and AUTOINCREMENT numbers the next after it.
 * Inside the restore's transaction.
 */
export function restartChangeLog(db: DatabaseSync): void {
  db.exec(`UPDATE changes_kept SET trimmed_through = (${LATEST}) + 1; DELETE FROM changes;
    DELETE FROM deleted_books;
    INSERT INTO sqlite_sequence (name, seq) SELECT 'changes', 0
      WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'changes');
    UPDATE sqlite_sequence SET seq = (SELECT trimmed_through FROM changes_kept)
      WHERE name = 'changes'`);
}
