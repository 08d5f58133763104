import type { DatabaseSync } from "node:sqlite";
import { writeStatement } from "./schema.js";

/**
 * Reads of single books that arrive in one turn of the event loop share one read
 * transaction, ended at the end of the turn or before the next write. Each transaction of its
 * own locks and unlocks the WAL's read mark and checks the file (three system calls, most of
 * what a read costs: see docs/performance.md). The snapshot is never older than the turn:
 * books are read as their requests are parsed, in the poll phase, and the transaction ends in
 * the check phase that follows.
 */
export interface SharedRead {
  /** Opens the turn's read transaction unless one is open; `onBegin` runs when it opens. */
  enter(onBegin: () => void): void;
  /** Ends the turn's read transaction, if one is open. */
  end(): void;
}

export function createSharedRead(db: DatabaseSync): SharedRead {
  // Their run() reports the last inserted rowid too (see writeStatement).
  const beginStmt = writeStatement(db, "BEGIN");
  const commitStmt = writeStatement(db, "COMMIT");
  let open = false;
  const end = () => {
    if (!open) return;
    open = false;
    // Asked of the connection, not assumed: a BEGIN that failed leaves nothing to end.
    if (db.isTransaction) commitStmt.run();
  };
  return {
    enter(onBegin) {
      if (open) return;
      // Marked first, so the end of the turn comes whatever BEGIN does.
      open = true;
      setImmediate(end);
      beginStmt.run();
      onBegin();
    },
    end,
  };
}
