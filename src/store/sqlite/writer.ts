// The store's writer: the one connection that writes, in a thread of its own so that no
// commit, fsync or wait for another connection's lock holds the event loop; for a database in
// memory (which one connection alone can see), this thread's own connection.
import type { DatabaseSync } from "node:sqlite";
import { bookStatements } from "./books.js";
import { type BookWrite, commitGroup } from "./group-commit.js";
import { type Outcome, settle } from "./outcome.js";
import { openThreadChannel } from "./thread-channel.js";

export interface Writer {
  /** Resolves with the write's result once it is committed (durable: synchronous=FULL). */
  write(write: BookWrite): Promise<unknown>;
  /** Commits the writes sent so far, then stops. */
  close(): Promise<void>;
}

/**
 * The writer for the file at `path`: its thread commits the writes that arrive together in
 * one transaction and one fsync. `onCommit` runs before each group's results are handed on
 * (to end this thread's shared read and forget cached reads).
 */
export function threadWriter(path: string, onCommit: () => void): Writer {
  const channel = openThreadChannel<BookWrite>("writer-thread", path, onCommit);
  return { write: (write) => channel.send(write).then(settle), close: channel.close };
}

/** The writer for a database in memory: writes that arrive in one turn commit after it. */
export function localWriter(db: DatabaseSync, onCommit: () => void): Writer {
  const books = bookStatements(db);
  let writes: BookWrite[] = [];
  let answers: ((outcome: Outcome) => void)[] = [];
  const flush = () => {
    const [group, waiting] = [writes, answers];
    [writes, answers] = [[], []];
    onCommit();
    for (const [i, outcome] of commitGroup(db, books, group).entries()) waiting[i]?.(outcome);
  };
  return {
    write: (write) =>
      new Promise<Outcome>((resolve) => {
        if (writes.length === 0) setImmediate(flush);
        writes.push(write);
        answers.push(resolve);
      }).then(settle),
    close: async () => {
      if (writes.length > 0) flush();
    },
  };
}
