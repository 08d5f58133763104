// The thread side of thread-channel.ts: requests gathered a turn at a time, answered together.
import type { DatabaseSync } from "node:sqlite";
import { parentPort } from "node:worker_threads";
import { perTurn } from "../per-turn.js";
import type { Changed, Committed } from "./group-commit.js";
import type { Outcome } from "./outcome.js";
import type { Reply } from "./thread-channel.js";

/** Where the outcomes of a group go, with what the group changed. */
type ReplyTo = (outcomes: Reply["outcomes"], changed?: Changed) => void;

interface Held<Request> {
  id: number;
  request: Request;
  replyTo: ReplyTo;
}

/**
 * Answers the requests sent to this thread: those that arrived while the last group was
 * handled go to `handle` together, and their outcomes back in one reply to each sender, the
 * parent's with what the group changed (the writer's). Requests may also come from elsewhere
 * (the workers' socket): `serve` is given the way to hand them in, and returns how to stop.
 * At "close", what is held is handled, `serve`'s requests stop, `db` is closed and the thread
 * ends.
 */
export function serveInGroups<Request>(
  db: DatabaseSync,
  handle: (requests: Request[]) => Committed,
  serve?: (take: (id: number, request: Request, replyTo: ReplyTo) => void) => () => void,
): void {
  const port = parentPort as NonNullable<typeof parentPort>;
  const group = perTurn((held: Held<Request>[]) => {
    const { outcomes, changed } = handle(held.map((sent) => sent.request));
    const replies = new Map<ReplyTo, Reply["outcomes"]>();
    for (const [i, { id, replyTo }] of held.entries()) {
      const reply = replies.get(replyTo) ?? [];
      replies.set(replyTo, reply);
      reply.push([id, outcomes[i] as Outcome]);
    }
    for (const [replyTo, reply] of replies) replyTo(reply, changed);
  });
  const toParent: ReplyTo = (outcomes, changed) => port.postMessage({ outcomes, changed });
  const stopServing = serve?.((id, request, replyTo) => group.push({ id, request, replyTo }));
  port.on("message", (message: { id: number; request: Request } | "close") => {
    if (message !== "close") return group.push({ ...message, replyTo: toParent });
    group.flush();
    stopServing?.();
    db.close();
    port.close();
  });
}
