// The writer's thread (see writer.ts): one connection that applies every write sent to it, a
// group at a time, and answers each group once its commit is on disk. Given a socket (the
// primary's writer, with WORKERS above 1), it takes the workers' writes there too, tells its
// parent "listening" once it does, `{ trouble }` when it cannot go on listening, and
// "changed" after each commit that changed books (for the workers' change streams).
import { parentPort, workerData } from "node:worker_threads";
import { changesBooks, commitGroup, type Write, writeStatements } from "./group-commit.js";
import { atMostEveryTell } from "./primary-writer.js";
import { connectExisting } from "./schema.js";
import { serveInGroups } from "./thread-serve.js";
import { listenForWrites } from "./writes-socket.js";

const { path, socket } = workerData as { path: string; socket?: string };
const db = connectExisting(path);
const statements = writeStatements(db);
const changed = atMostEveryTell(() => parentPort?.postMessage("changed"));
serveInGroups<Write>(
  db,
  (writes) => {
    const committed = commitGroup(db, statements, writes);
    if (socket !== undefined && writes.some(changesBooks)) changed();
    return committed;
  },
  socket === undefined
    ? undefined
    : (take) =>
        listenForWrites(socket, take, () => parentPort?.postMessage("listening"), {
          onTrouble: (error) => parentPort?.postMessage({ trouble: error.message }),
        }).close,
);
