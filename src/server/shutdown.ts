import type { App } from "../http/app.js";
import { standardOutputLog } from "../http/log-destination.js";
import type { BookStore } from "../store/store.js";

/** Sent to a worker: begin shutdown. Sent by a worker: it has begun, so all must. */
export const SHUTDOWN = "book-catalogue:shutdown";

/** How long the last log lines may take to be written before the process exits anyway. */
const LOG_DRAIN_MS = 1000;

/** Exits with `code` once the log lines written so far are out, or dropped, or at most in 1 s. */
export async function exitOnceLogged(code: number): Promise<never> {
  await standardOutputLog().drain(LOG_DRAIN_MS);
  process.exit(code);
}

/**
 * Calls `stop` on every SIGTERM or SIGINT, with the signal's name; `stop` acts on the first.
 * A later one must not end the process either: Ctrl-C at a terminal running `npm start` sends
 * SIGINT to the server and to npm, which passes it on, so the server gets it twice.
 */
export function onStopSignal(stop: (reason: string) => void): void {
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/**
 * Answers 503 on /ready for `drainMs` while still serving, so that a balancer polling it sends
 * no more traffic before the port closes; then stops accepting, lets in-flight requests finish
 * (at most `timeoutMs`), closes the store and exits 0.
 */
export async function shutdown(
  app: App,
  store: BookStore,
  { timeoutMs, drainMs }: { timeoutMs: number; drainMs: number },
  reason: string,
) {
  app.log.info({ reason, drainMs }, "shutting down");
  app.beginShutdown();
  if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), timeoutMs);
  });
  const closed = app.close().then(() => false);
  if (await Promise.race([closed, timedOut])) {
    app.log.warn(
      { timeoutMs },
      "in-flight requests did not finish in time; closing their connections",
    );
    app.server.closeAllConnections();
    await closed;
  }
  clearTimeout(timer);
  await store.close();
  app.log.info("stopped");
  await exitOnceLogged(0);
}
