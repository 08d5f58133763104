// Requests to a thread of the store's own (the writer, the counter), each answered with its
// outcome; replies come a group at a time.
import { readFileSync } from "node:fs";
import { isSea } from "node:sea";
import { Worker } from "node:worker_threads";
import { StoreUnavailableError } from "../store.js";
import { translate } from "./errors.js";
import type { Changed } from "./group-commit.js";
import type { Outcome } from "./outcome.js";

export interface ThreadChannel<Request> {
  /** The request's outcome, once the thread has answered it. */
  send(request: Request): Promise<Outcome>;
  /** Lets the thread answer what it holds, then stops it. */
  close(): Promise<void>;
}

/**
 * What a thread answers: the outcome of each request, by the id it was sent with, and what
 * the commit of those requests changed (the writer's, when known).
 */
export interface Reply {
  outcomes: [id: number, outcome: Outcome][];
  changed?: Changed;
}

/** The threads' entry files, beside this one. */
export type ThreadEntry = "writer-thread" | "count-thread" | "migrate-thread";

// Run from the sources (tests, under tsx) the thread loads TypeScript the same way.
const fromSources = import.meta.url.endsWith(".ts");

/** Starts the thread `entry` with `data` (its `workerData`). */
export function startThread(entry: ThreadEntry, data: object): Worker {
  if (isSea()) return startBundledThread(entry, data);
  const url = new URL(`./${entry}.${fromSources ? "ts" : "js"}`, import.meta.url);
  return new Worker(url, { workerData: data, execArgv: fromSources ? ["--import", "tsx"] : [] });
}

/**
 * In the release's single executable a thread cannot load the files embedded in it (only the
 * main thread reads them): it runs its entry bundled into one module with its imports
 * (scripts/release.mjs), read here and handed over whole.
 */
function startBundledThread(entry: ThreadEntry, data: object): Worker {
  const code = readFileSync(new URL(`../../../threads/${entry}.mjs`, import.meta.url));
  const url = new URL(`data:text/javascript;base64,${code.toString("base64")}`);
  return new Worker(url, { workerData: data });
}

/**
 * Requests to the thread `entry` (started by the first) on the database file at `path`, its
 * schema already prepared (or being migrated, by that thread). `onReply` runs, with what the reply's commit changed, before the
 * outcomes of each reply are handed on. A
 * thread that stops fails the requests it held, and the next request starts another; an
 * idle thread does not keep the process running.
 */
export function openThreadChannel<Request>(
  entry: ThreadEntry,
  path: string,
  onReply: (changed: Changed | undefined) => void = () => {},
): ThreadChannel<Request> {
  const pending = new Map<number, (outcome: Outcome | { error: unknown }) => void>();
  let nextId = 0;
  let thread: Worker | undefined;
  let closed = false;

  const start = () => {
    const started = startThread(entry, { path });
    started.unref();
    started.on("message", (reply: Reply) => {
      onReply(reply.changed);
      for (const [id, outcome] of reply.outcomes) {
        pending.get(id)?.(outcome);
        pending.delete(id);
      }
      // Idle, it lets the process end; closing, it is held until it has exited.
      if (pending.size === 0 && !closed) started.unref();
    });
    // A thread that could not start (its statements cannot be prepared, say) fails what it
    // held with its error, as the same call on this thread would have.
    let error: unknown = new StoreUnavailableError();
    started.on("error", (thrown) => {
      error = translate(thrown);
    });
    started.on("exit", () => {
      if (thread === started) thread = undefined;
      for (const answer of pending.values()) answer({ error });
      pending.clear();
    });
    return started;
  };

  return {
    send: (request) =>
      new Promise((resolve, reject) => {
        if (closed) return reject(new StoreUnavailableError());
        thread ??= start();
        // Held only while requests wait.
        if (pending.size === 0) thread.ref();
        const id = nextId++;
        pending.set(id, (outcome) =>
          "error" in outcome ? reject(outcome.error) : resolve(outcome),
        );
        thread.postMessage({ id, request });
      }),
    close: async () => {
      closed = true;
      const running = thread;
      if (running === undefined) return;
      running.ref();
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.postMessage("close");
      await exited;
    },
  };
}
