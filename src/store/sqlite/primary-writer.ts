// With WORKERS above 1 on a SQLite file, one writer serves every worker: its thread runs in the
// primary process, and the workers send it their writes over a Unix socket (writes-socket.ts)
// in a folder only this service's user may enter. Two writers would fight over SQLite's one
// write lock, each sleeping in busy_timeout while the other commits; one writer commits the
// writes of all in the same groups.

import type { Worker as ClusterWorker } from "node:cluster";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "node:worker_threads";
import { isOwnFolder } from "./socket-folder.js";
import { startThread } from "./thread-channel.js";
import type { Writer } from "./writer.js";
import { writerAtSocket } from "./writes-socket.js";

/** How the primary tells its workers where the writer's socket is. */
const SOCKET_VARIABLE = "BOOK_CATALOGUE_WRITES_SOCKET";
/** What the primary sends every worker once books have changed (their change streams read). */
export const CHANGED_MESSAGE = { type: "book-catalogue:changed" } as const;
/** A writer's thread that stopped unasked is started again after this long. */
const RESTART_MS = 1_000;
/** The longest path a Unix socket may have on Linux, in bytes. */
const SOCKET_PATH_MAX = 107;

/**
 * In the primary: the writer's thread on the file at `path`, listening on its socket.
 * Resolves once it listens, with the socket and the environment that tells the workers of it.
 * Fails, leaving nothing behind, when the thread cannot start or listen. `onTrouble` hears of
 * what goes wrong after: the thread failing, stopping, starting again or not; `onChanged` of
 * each commit that changed books.
 */
export async function serveWorkersWrites(
  path: string,
  onTrouble: (message: string) => void = () => {},
  onChanged: () => void = () => {},
): Promise<{ socket: string; env: Record<string, string>; close(): Promise<void> }> {
  const prefix = join(tmpdir(), "book-catalogue-");
  // mkdtemp adds six characters: the socket's path is as long as this one.
  const longest = join(`${prefix}XXXXXX`, "writes.sock");
  if (Buffer.byteLength(longest) > SOCKET_PATH_MAX) {
    throw new Error(
      `its socket's path ${longest} would be longer than ${SOCKET_PATH_MAX} bytes, the most a ` +
        "Unix socket's may be: set TMPDIR to a shorter folder",
    );
  }
  // mkdtemp makes the folder readable by its owner alone.
  const folder = mkdtempSync(prefix);
  const socket = join(folder, "writes.sock");
  let closed = false;
  let thread: Worker;
  let exited: Promise<unknown>;
  const restart = () => {
    if (closed) return;
    start().then(
      () => onTrouble("the SQLite writer's thread listens again"),
      (error) => onTrouble(`the SQLite writer's thread could not start again: ${error.message}`),
    );
  };
  const start = () =>
    new Promise<void>((listening, failed) => {
      thread = startThread("writer-thread", { path, socket });
      // Until it listens, what goes wrong is the start's failure; after, it is told.
      let up = false;
      thread.on("message", (message: "listening" | "changed" | { trouble: string }) => {
        if (message === "changed") return onChanged();
        if (message !== "listening")
          return onTrouble(`the SQLite writer's socket: ${message.trouble}`);
        up = true;
        listening();
      });
      thread.once("error", (error) => {
        failed(error);
        if (up) onTrouble(`the SQLite writer's thread failed: ${error.message}`);
      });
      exited = new Promise((stopped) => thread.once("exit", stopped)).then((code) => {
        failed(new Error(`its thread stopped (exit code ${code})`));
        if (closed) return;
        onTrouble(`the SQLite writer's thread stopped; starting it again in ${RESTART_MS} ms`);
        setTimeout(restart, RESTART_MS).unref();
      });
    });
  try {
    await start();
  } catch (error) {
    closed = true;
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    socket,
    env: { [SOCKET_VARIABLE]: socket },
    close: async () => {
      closed = true;
      thread.postMessage("close");
      await exited;
      // Its own folder only: not one another user made in its place.
      if (isOwnFolder(folder)) rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * In a worker: the writer the primary runs. `onCommit` runs before each group of outcomes is
 * handed on; what the group changed is not told here (the other workers' writes go through the
 * same writer), so everything kept is forgotten. Without the primary's writer, writes answer
 * 503.
 */
export function writerInPrimary(onCommit: () => void): Writer {
  return writerAtSocket(process.env[SOCKET_VARIABLE] ?? "", onCommit);
}

/** How often at most the workers are told that books changed: a commit's wait for its stream. */
const TELL_EVERY_MS = 20;

/**
 * In the writer's thread: `tell` at most once every TELL_EVERY_MS, after the first call of
 * each period. Under load the writer commits hundreds of groups a second, and one word of
 * them is enough: each message wakes the primary and every worker.
 */
export function atMostEveryTell(tell: () => void): () => void {
  let waiting = false;
  return () => {
    if (waiting) return;
    waiting = true;
    setTimeout(() => {
      waiting = false;
      tell();
    }, TELL_EVERY_MS);
  };
}

/**
 * In the primary: tells every worker that books changed. A worker whose channel closes meanwhile
 * (it is stopping) is passed over: with a callback, send answers that error to it rather than
 * raising it on the primary, which would then exit 1.
 */
export const tellWorkers = (workers: () => Iterable<ClusterWorker | undefined>) => () => {
  for (const worker of workers()) {
    if (worker?.isConnected()) worker.send(CHANGED_MESSAGE, () => {});
  }
};

/** In a worker: `onChange` each time the primary tells that books changed. */
export function watchPrimary(onChange: () => void): { close(): Promise<void> } {
  const heard = (message: { type?: string }) => {
    if (message?.type === CHANGED_MESSAGE.type) onChange();
  };
  process.on("message", heard);
  return { close: async () => void process.off("message", heard) };
}
