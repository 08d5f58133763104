// The thread side of thread-channel.ts: requests gathered a turn at a time, answered together.
import type { DatabaseSync } from "node:sqlite";
import { parentPort } from "node:worker_threads";
import { perTurn } from "../per-turn.js";
import type { Committed } from "./group-commit.js";
import type { Reply } from "./thread-channel.js";

/**
 * Answers the requests sent to this thread: those that arrived while the last group was
 * handled go to `handle` together, and their outcomes back in one reply, with what the group
 * changed (the writer's). At "close", what is held is handled, then `db` is closed and the
 * thread ends.
 */
export function serveInGroups<Request>(
  db: DatabaseSync,
  handle: (requests: Request[]) => Committed,
): void {
  const port = parentPort as NonNullable<typeof parentPort>;
  const group = perTurn((held: { id: number; request: Request }[]) => {
    const { outcomes, changed } = handle(held.map((sent) => sent.request));
    const reply: Reply = {
      outcomes: outcomes.map((outcome, i) => [held[i]?.id as number, outcome]),
      changed,
    };
    port.postMessage(reply);
  });
  port.on("message", (message: { id: number; request: Request } | "close") => {
    if (message !== "close") return group.push(message);
    group.flush();
    db.close();
    port.close();
  });
}
