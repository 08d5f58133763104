// The writes of single books as messages, and the group commit that applies them: wherever
// the writer's connection is (its own thread, or this one for a database in memory).
import type { DatabaseSync } from "node:sqlite";
import type { BookChanges, NewBook } from "../../rules/book.js";
import type { ExpectedVersions } from "../book-version.js";
import { BookChangedError, BookIdsExhaustedError } from "../store.js";
import type { BookStatements } from "./books.js";
import { failure, type Outcome } from "./outcome.js";
import { transaction } from "./schema.js";

/**
 * A create, update or delete, as it crosses to the writer's thread; past its `deadline`
 * (Date.now()) it is not applied: its caller is about to be answered 503, or has been.
 */
export type BookWrite = (
  | { op: "create"; book: NewBook }
  | { op: "update"; id: number; changes: BookChanges; expected?: ExpectedVersions }
  | { op: "remove"; id: number; expected?: ExpectedVersions }
) & { deadline?: number };

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

function apply(books: BookStatements, write: BookWrite): Outcome {
  if (write.deadline !== undefined && Date.now() > write.deadline) return { failed: "unavailable" };
  const result =
    write.op === "create"
      ? books.create(write.book)
      : write.op === "update"
        ? books.update(write.id, write.changes, write.expected)
        : books.remove(write.id, write.expected);
  if (result instanceof BookChangedError) return { failed: "changed" };
  return result instanceof BookIdsExhaustedError ? { failed: "ids exhausted" } : { value: result };
}

/**
 * Applies the writes in one transaction, so they share one fsync, and tells what each came
 * to once it has committed. One write's failure must not fail the others: when the group
 * fails, they are replayed one by one (unless the database is locked: then each would be),
 * and what they changed is not told (another connection may have written between them).
 */
export function commitGroup(
  db: DatabaseSync,
  books: BookStatements,
  writes: BookWrite[],
): Committed {
  const commit = (group: BookWrite[]): Required<Committed> =>
    transaction(db, () => {
      const from = books.changeCount();
      const outcomes = group.map((write) => apply(books, write));
      const ids = group.flatMap((write) => (write.op === "create" ? [] : [write.id]));
      return { outcomes, changed: { from, to: books.changeCount(), ids } };
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
