// The counter's thread (see count.ts): its own connection, that only reads.
import { workerData } from "node:worker_threads";
import { answerCounts, type CountRequest, countStatements } from "./count.js";
import { connectExisting } from "./schema.js";
import { serveInGroups } from "./thread-serve.js";

const db = connectExisting((workerData as { path: string }).path);
const count = countStatements(db);
serveInGroups<CountRequest>(db, (requests) => ({ outcomes: answerCounts(count, requests) }));
