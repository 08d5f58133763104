import type { FastifyBaseLogger } from "fastify";
import { exitOnceLogged } from "./shutdown.js";

/**
 * An exception no code caught, or a rejection no code handled, leaves the process in a state
 * nobody knows: it is logged with its stack, and the process exits 1 so that its supervisor
 * (systemd's Restart=always, or the primary with WORKERS above 1) starts a fresh one.
 */
export function exitOnUnexpected(log: Pick<FastifyBaseLogger, "fatal">): void {
  const exit = (what: string) => (error: unknown) => {
    log.fatal({ err: error }, `${what}: exiting, to be started again`);
    // A moment for the line to be written, never more (log-destination.ts).
    void exitOnceLogged(1);
  };
  process.on("uncaughtException", exit("uncaught exception"));
  process.on("unhandledRejection", exit("unhandled rejection"));
}
