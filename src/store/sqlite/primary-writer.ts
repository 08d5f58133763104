// With WORKERS above 1 on a SQLite file, one writer serves every worker: it runs in the
// primary process, and the workers send it their writes over the cluster's channel. Two
// writers would fight over SQLite's one write lock, each sleeping in busy_timeout while the
// other commits; one writer commits the writes of all in the same groups.
import cluster, { type Worker } from "node:cluster";
import { type PerTurn, perTurn } from "../per-turn.js";
import type { BookWrite } from "./group-commit.js";
import { failure, type Outcome, settle } from "./outcome.js";
import { openThreadChannel } from "./thread-channel.js";
import type { Writer } from "./writer.js";

const WRITES = "book-catalogue:sqlite-writes";
const OUTCOMES = "book-catalogue:sqlite-outcomes";

interface Writes {
  type: typeof WRITES;
  writes: [id: number, write: BookWrite][];
}

interface Outcomes {
  type: typeof OUTCOMES;
  outcomes: [id: number, outcome: Outcome][];
}

/** In the primary: commits the workers' writes to the file at `path` in the writer's thread. */
export function serveWorkersWrites(path: string): { close(): Promise<void> } {
  const channel = openThreadChannel<BookWrite>("writer-thread", path);
  const repliers = new Map<Worker, PerTurn<[number, Outcome]>>();
  const replierFor = (worker: Worker) => {
    let reply = repliers.get(worker);
    if (reply === undefined) {
      reply = perTurn((outcomes) => {
        const message: Outcomes = { type: OUTCOMES, outcomes };
        if (worker.isConnected()) worker.send(message);
      });
      repliers.set(worker, reply);
    }
    return reply;
  };
  const onMessage = (worker: Worker, message: Partial<Writes>) => {
    if (message?.type !== WRITES || !Array.isArray(message.writes)) return;
    const reply = replierFor(worker);
    for (const [id, write] of message.writes) {
      channel.send(write).then(
        (outcome) => reply.push([id, outcome]),
        (error) => reply.push([id, failure(error)]),
      );
    }
  };
  const onExit = (worker: Worker) => repliers.delete(worker);
  cluster.on("message", onMessage);
  cluster.on("exit", onExit);
  return {
    close: () => {
      cluster.off("message", onMessage);
      cluster.off("exit", onExit);
      return channel.close();
    },
  };
}

/**
 * In a worker: the writer the primary runs. `onCommit` runs before each group of outcomes is
 * handed on; what the group changed is not told here (the other workers' writes go through the
 * same writer), so everything kept is forgotten. Without the primary, writes answer 503.
 */
export function writerInPrimary(onCommit: () => void): Writer {
  const waiting = new Map<number, (outcome: Outcome) => void>();
  let next = 0;
  const send = perTurn((writes: Writes["writes"]) => {
    const message: Writes = { type: WRITES, writes };
    process.send?.(message);
  });
  const onMessage = (message: Partial<Outcomes>) => {
    if (message?.type !== OUTCOMES || !Array.isArray(message.outcomes)) return;
    onCommit();
    for (const [id, outcome] of message.outcomes) {
      waiting.get(id)?.(outcome);
      waiting.delete(id);
    }
  };
  const onDisconnect = () => {
    for (const answer of waiting.values()) answer({ failed: "unavailable" });
    waiting.clear();
  };
  process.on("message", onMessage);
  process.on("disconnect", onDisconnect);
  return {
    write: (write) =>
      new Promise<Outcome>((answer) => {
        if (!process.connected) return answer({ failed: "unavailable" });
        const id = next++;
        waiting.set(id, answer);
        send.push([id, write]);
      }).then(settle),
    close: async () => {
      process.off("message", onMessage);
      process.off("disconnect", onDisconnect);
      onDisconnect();
    },
  };
}
