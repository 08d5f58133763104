// The writer's thread (see writer.ts): one connection that applies every write sent to it, a
// group at a time, and answers each group once its commit is on disk.
import { workerData } from "node:worker_threads";
import { bookStatements } from "./books.js";
import { type BookWrite, commitGroup } from "./group-commit.js";
import { connect } from "./schema.js";
import { serveInGroups } from "./thread-serve.js";

/**
 * WAL frames (4 KiB pages) after which a commit copies the WAL back into the database file.
 * SQLite's 1,000 copied the same hot pages again every few dozen commits; 4,000 copy each
 * once for four times as many commits (docs/performance.md). The WAL file then grows to about
 * 17 MiB (these frames and the commit that passed them), and is written again from its start.
 */
const CHECKPOINT_FRAMES = 4_000;

const db = connect((workerData as { path: string }).path);
db.exec(`PRAGMA wal_autocheckpoint = ${CHECKPOINT_FRAMES}`);
const books = bookStatements(db);
serveInGroups<BookWrite>(db, (writes) => commitGroup(db, books, writes));
