// With WORKERS above 1 and no Redis, the failed-login counts live in the primary process and
// every worker asks it: one count per client for the whole service, not one per worker.
import cluster from "node:cluster";
import { LimiterUnavailableError, type LoginLimiter } from "./login-limiter.js";

const ASK = "book-catalogue:login-limit";
const ANSWER = "book-catalogue:login-limit-answer";

interface Ask {
  type: typeof ASK;
  id: number;
  step: "attempt" | "succeeded";
  client: string;
}

interface Answer {
  type: typeof ANSWER;
  id: number;
  wait: number;
}

/** In the primary: answers the workers' questions from `limiter`. */
export function serveLoginLimiter(limiter: LoginLimiter): void {
  cluster.on("message", async (worker, message: Partial<Ask>) => {
    if (message?.type !== ASK || typeof message.client !== "string") return;
    let wait = 0;
    if (message.step === "attempt") wait = await limiter.attempt(message.client);
    else await limiter.succeeded(message.client);
    const answer: Answer = { type: ANSWER, id: message.id as number, wait };
    if (worker.isConnected()) worker.send(answer);
  });
}

/** In a worker: the limiter the primary keeps. Without the primary, logins answer 503. */
export function createPrimaryLoginLimiter(): LoginLimiter {
  const waiting = new Map<number, { resolve(wait: number): void; reject(error: Error): void }>();
  let next = 0;
  const onMessage = (message: Partial<Answer>) => {
    if (message?.type !== ANSWER) return;
    waiting.get(message.id as number)?.resolve(message.wait ?? 0);
    waiting.delete(message.id as number);
  };
  const onDisconnect = () => {
    for (const { reject } of waiting.values()) reject(new LimiterUnavailableError());
    waiting.clear();
  };
  process.on("message", onMessage);
  process.on("disconnect", onDisconnect);
  const ask = (step: Ask["step"], client: string) =>
    new Promise<number>((resolve, reject) => {
      if (!process.connected || process.send === undefined) {
        reject(new LimiterUnavailableError());
        return;
      }
      const id = next++;
      waiting.set(id, { resolve, reject });
      const question: Ask = { type: ASK, id, step, client };
      process.send(question);
    });
  return {
    attempt: (client) => ask("attempt", client),
    succeeded: async (client) => {
      await ask("succeeded", client);
    },
    async close() {
      process.off("message", onMessage);
      process.off("disconnect", onDisconnect);
    },
  };
}
