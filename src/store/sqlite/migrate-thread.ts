// The thread that migrates the database file at start-up (store.ts migrateSqliteFile): each
// turn's statements run here, so one that runs long (an index built over millions of books, a
// wait for another connection's lock) holds no event loop: /health answers, and the progress
// lines go out on time.
import { workerData } from "node:worker_threads";
import { failure, type Outcome } from "./outcome.js";
import { booksThrough, connectExisting, migrationTurn } from "./schema.js";
import { serveInGroups } from "./thread-serve.js";

/** A turn of migrating, or the books and those through an id (a step's progress). */
export type MigrateRequest = "turn" | { through: number };

const db = connectExisting((workerData as { path: string }).path);
serveInGroups<MigrateRequest>(db, (requests) => ({
  outcomes: requests.map((request): Outcome => {
    try {
      return { value: request === "turn" ? migrationTurn(db) : booksThrough(db, request.through) };
    } catch (error) {
      return failure(error);
    }
  }),
}));
