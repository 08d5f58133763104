// The writer's thread (see writer.ts): one connection that applies every write sent to it, a
// group at a time, and answers each group once its commit is on disk.
import { workerData } from "node:worker_threads";
import { bookStatements } from "./books.js";
import { type BookWrite, commitGroup } from "./group-commit.js";
import { connect } from "./schema.js";
import { serveInGroups } from "./thread-serve.js";

const db = connect((workerData as { path: string }).path);
const books = bookStatements(db);
serveInGroups<BookWrite>(db, (writes) => commitGroup(db, books, writes));
