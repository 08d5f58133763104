// The thread side of thread-channel.ts: requests gathered a turn at a time, answered together.
import type { DatabaseSync } from "node:sqlite";
import { parentPort } from "node:worker_threads";
import type { Outcome } from "./outcome.js";
import type { Reply } from "./thread-channel.js";

/**
 * Answers the requests sent to this thread: those that arrived while the last group was
 * handled go to `handle` together, and their outcomes back in one reply. At "close", what is
 * held is handled, then `db` is closed and the thread ends.
 */
export function serveInGroups<Request>(
  db: DatabaseSync,
  handle: (requests: Request[]) => Outcome[],
): void {
  const port = parentPort as NonNullable<typeof parentPort>;
  let group: { id: number; request: Request }[] = [];
  const answer = () => {
    const held = group;
    group = [];
    if (held.length === 0) return;
    const outcomes = handle(held.map((sent) => sent.request));
    port.postMessage(outcomes.map((outcome, i) => [held[i]?.id, outcome]) as Reply);
  };
  port.on("message", (message: { id: number; request: Request } | "close") => {
    if (message === "close") {
      answer();
      db.close();
      port.close();
      return;
    }
    if (group.length === 0) setImmediate(answer);
    group.push(message);
  });
}
