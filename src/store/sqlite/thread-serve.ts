// The thread side of thread-channel.ts: requests gathered a turn at a time, answered together.
import type { DatabaseSync } from "node:sqlite";
import { parentPort } from "node:worker_threads";
import { perTurn } from "../per-turn.js";
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
  const group = perTurn((held: { id: number; request: Request }[]) => {
    const outcomes = handle(held.map((sent) => sent.request));
    port.postMessage(outcomes.map((outcome, i) => [held[i]?.id, outcome]) as Reply);
  });
  port.on("message", (message: { id: number; request: Request } | "close") => {
    if (message !== "close") return group.push(message);
    group.flush();
    db.close();
    port.close();
  });
}
