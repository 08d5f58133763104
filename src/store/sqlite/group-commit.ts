// The writes (of single books, of accounts) as messages, and the group commit that applies
// them: wherever the writer's connection is (its own thread, or this one for a database in
// memory).
import type { DatabaseSync } from "node:sqlite";
import type { BookChanges, NewBook } from "../../rules/book.js";
import type { AccountChanges, NewAccount } from "../accounts.js";
import type { ExpectedVersions } from "../book-version.js";
import { BookExistsError, type ChangedBy, type ChangesKept } from "../changes.js";
import { BookChangedError, BookIdsExhaustedError } from "../store.js";
import { type AccountWrites, accountWrites } from "./accounts.js";
import { type BookStatements, bookStatements } from "./books.js";
import { changeTrimming } from "./changes.js";
import { failure, type Outcome } from "./outcome.js";
import { transaction } from "./schema.js";

/** A create, update, delete or restore of a book, by whom (for the change log). */
export type BookWrite = (
  | { op: "create"; book: NewBook }
  | { op: "update"; id: number; changes: BookChanges; expected?: ExpectedVersions }
  | { op: "remove"; id: number; expected?: ExpectedVersions }
  | { op: "restore"; id: number }
) & { by?: ChangedBy | undefined };

/** A create, update or delete of an account: it changes no book. */
export type AccountWrite =
  | { op: "create account"; account: NewAccount }
  | { op: "update account"; id: number; changes: AccountChanges }
  | { op: "remove account"; id: number };

/** A trim of the change log (changes.ts). */
export type ChangesTrim = { op: "trim changes"; kept: ChangesKept };

/**
 * A write as it crosses to the writer's thread (as JSON to the primary's); past its
 * `deadline` (Date.now()) it is not applied: its caller is about to be answered 503, or has been.
 */
export type Write = (BookWrite | AccountWrite | ChangesTrim) & { deadline?: number };

/** The statements the writer's connection applies writes with. */
export interface WriteStatements {
  books: BookStatements;
  accounts: AccountWrites;
  trimChanges: (kept: ChangesKept) => number;
}

export const writeStatements = (db: DatabaseSync): WriteStatements => ({
  books: bookStatements(db),
  accounts: accountWrites(db),
  trimChanges: changeTrimming(db),
});

/**
 * What one commit of the writer changed: the change count (migration 10) went from `from` to
 * `to` in its transaction, by updates and deletes of these books and nothing else.
 */
export interface Changed {
  from: number;
  to: number;
  ids: number[];
}

/** A group's outcomes, and what its commit changed when that is known. */
export interface Committed {
  outcomes: Outcome[];
  changed?: Changed;
}

function apply(statements: WriteStatements, write: Write): Outcome {
  if (write.deadline !== undefined && Date.now() > write.deadline) return { failed: "unavailable" };
  const result = run(statements, write);
  if (result instanceof BookChangedError) return { failed: "changed" };
  if (result instanceof BookExistsError) return { failed: "exists" };
  return result instanceof BookIdsExhaustedError ? { failed: "ids exhausted" } : { value: result };
}

/** What a write comes to: its value, or the error it answers rather than throws. */
function run({ books, accounts, trimChanges }: WriteStatements, write: Write): unknown {
  switch (write.op) {
    case "create":
      return books.create(write.book, write.by);
    case "update":
      return books.update(write.id, write.changes, write.expected, write.by);
    case "remove":
      return books.remove(write.id, write.expected, write.by);
    case "restore":
      return books.restore(write.id, write.by);
    case "create account":
      return accounts.create(write.account);
    case "update account":
      return accounts.update(write.id, write.changes);
    case "remove account":
      return accounts.remove(write.id);
    case "trim changes":
      return trimChanges(write.kept);
  }
}

/** Whether a write may change a book (and so append to the change log). */
export const changesBooks = (write: Write) =>
  write.op === "create" || write.op === "update" || write.op === "remove" || write.op === "restore";

/** The books a group's writes change, for the kept reads to forget: an account's id is none. */
const changedBooks = (group: Write[]) =>
  group.flatMap((write) => (write.op === "update" || write.op === "remove" ? [write.id] : []));

/**
 * Applies the writes in one transaction, so they share one fsync, and tells what each came
 * to once it has committed. One write's failure must not fail the others: when the group
 * fails, they are replayed one by one (unless the database is locked: then each would be),
 * and what they changed is not told (another connection may have written between them).
 */
export function commitGroup(
  db: DatabaseSync,
  statements: WriteStatements,
  writes: Write[],
): Committed {
  const { changeCount, beginWrites } = statements.books;
  const commit = (group: Write[]): Required<Committed> =>
    transaction(db, () => {
      beginWrites();
      const from = changeCount();
      const outcomes = group.map((write) => apply(statements, write));
      return { outcomes, changed: { from, to: changeCount(), ids: changedBooks(group) } };
    });
  try {
    return commit(writes);
  } catch (error) {
    const outcome = failure(error);
    if (writes.length === 1 || ("failed" in outcome && outcome.failed === "unavailable")) {
      return { outcomes: writes.map(() => outcome) };
    }
    const outcomes = writes.map((write) => {
      try {
        return commit([write]).outcomes[0] as Outcome;
      } catch (single) {
        return failure(single);
      }
    });
    return { outcomes };
  }
}
