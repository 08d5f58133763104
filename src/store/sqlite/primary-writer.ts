// With WORKERS above 1 on a SQLite file, one writer serves every worker: it runs in the
// primary process, and the workers send it their writes over the cluster's channel. Two
// writers would fight over SQLite's one write lock, each sleeping in busy_timeout while the
// other commits; one writer commits the writes of all in the same groups.
import cluster, { type Worker } from "node:cluster";
import { StoreUnavailableError } from "../store.js";
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

/**
 * Gathers what is sent during one turn of the event loop and hands it on together after it:
 * one message instead of many.
 */
function perTurn<T>(send: (items: T[]) => void): (item: T) => void {
  let items: T[] = [];
  return (item) => {
    if (items.length === 0) {
      setImmediate(() => {
        const sent = items;
        items = [];
        send(sent);
      });
    }
    items.push(item);
  };
}

/** In the primary: commits the workers' writes to the file at `path` in the writer's thread. */
export function serveWorkersWrites(path: string): { close(): Promise<void> } {
  const channel = openThreadChannel<BookWrite>("writer-thread", path);
  const repliers = new Map<Worker, (answer: [number, Outcome]) => void>();
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
        (outcome) => reply([id, outcome]),
        (error) => reply([id, failure(error)]),
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
 * handed on. Without the primary, writes answer 503.
 */
export function writerInPrimary(onCommit: () => void): Writer {
  const waiting = new Map<
    number,
    { resolve(value: unknown): void; reject(error: unknown): void }
  >();
  let next = 0;
  const send = perTurn((writes: Writes["writes"]) => {
    const message: Writes = { type: WRITES, writes };
    process.send?.(message);
  });
  const onMessage = (message: Partial<Outcomes>) => {
    if (message?.type !== OUTCOMES || !Array.isArray(message.outcomes)) return;
    onCommit();
    for (const [id, outcome] of message.outcomes) {
      const answer = waiting.get(id);
      waiting.delete(id);
      try {
        answer?.resolve(settle(outcome));
      } catch (error) {
        answer?.reject(error);
      }
    }
  };
  const onDisconnect = () => {
    for (const { reject } of waiting.values()) reject(new StoreUnavailableError());
    waiting.clear();
  };
  process.on("message", onMessage);
  process.on("disconnect", onDisconnect);
  return {
    write: (write) =>
      new Promise((resolve, reject) => {
        if (!process.connected) return reject(new StoreUnavailableError());
        const id = next++;
        waiting.set(id, { resolve, reject });
        send([id, write]);
      }),
    close: async () => {
      process.off("message", onMessage);
      process.off("disconnect", onDisconnect);
      onDisconnect();
    },
  };
}
