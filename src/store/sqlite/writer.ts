// The store's writer: the one connection that writes, in a thread of its own so that no
// commit, fsync or wait for another connection's lock holds the event loop; for a database in
// memory (which one connection alone can see), this thread's own connection.
import type { DatabaseSync } from "node:sqlite";
import { perTurn } from "../per-turn.js";
import { type Changed, commitGroup, type Write, type WriteStatements } from "./group-commit.js";
import { type Outcome, settle } from "./outcome.js";
import { openThreadChannel } from "./thread-channel.js";

export interface Writer {
  /** Resolves with the write's result once it is committed (durable: synchronous=FULL). */
  write(write: Write): Promise<unknown>;
  /** Commits the writes sent so far, then stops. */
  close(): Promise<void>;
  /**
   * Resolves when the writer can be reached, else rejects with StoreUnavailableError: for a
   * writer that can lose the way to it (the primary's, at its socket).
   */
  ping?(): Promise<void>;
}

/**
 * The writer for the file at `path`: its thread commits the writes that arrive together in
 * one transaction and one fsync. `onCommit` runs, with what the group changed, before its
 * results are handed on (to end this thread's shared read and forget what it changed).
 */
export function threadWriter(path: string, onCommit: (changed?: Changed) => void): Writer {
  const channel = openThreadChannel<Write>("writer-thread", path, onCommit);
  return { write: (write) => channel.send(write).then(settle), close: channel.close };
}

/**
 * The writer for a database in memory, on this thread's connection (with its write
 * statements, `statements`): writes that arrive in one turn commit after it, once
 * `beforeCommit` has ended the connection's read.
 */
export function localWriter(
  db: DatabaseSync,
  statements: WriteStatements,
  beforeCommit: () => void,
  onCommit: (changed?: Changed) => void,
): Writer {
  const group = perTurn((held: { write: Write; answer: (outcome: Outcome) => void }[]) => {
    beforeCommit();
    const { outcomes, changed } = commitGroup(
      db,
      statements,
      held.map((sent) => sent.write),
    );
    onCommit(changed);
    for (const [i, outcome] of outcomes.entries()) held[i]?.answer(outcome);
  });
  return {
    write: (write) => new Promise<Outcome>((answer) => group.push({ write, answer })).then(settle),
    close: async () => group.flush(),
  };
}
