// The writes of single books as messages, and the group commit that applies them: wherever
// the writer's connection is (its own thread, or this one for a database in memory).
import type { DatabaseSync } from "node:sqlite";
import type { BookChanges, NewBook } from "../../rules/book.js";
import type { ExpectedVersions } from "../book-version.js";
import { BookChangedError } from "../store.js";
import type { BookStatements } from "./books.js";
import { failure, type Outcome } from "./outcome.js";
import { transaction } from "./schema.js";

/** A create, update or delete, as it crosses to the writer's thread. */
export type BookWrite =
  | { op: "create"; book: NewBook }
  | { op: "update"; id: number; changes: BookChanges; expected?: ExpectedVersions }
  | { op: "remove"; id: number; expected?: ExpectedVersions };

function apply(books: BookStatements, write: BookWrite): Outcome {
  const result =
    write.op === "create"
      ? books.create(write.book)
      : write.op === "update"
        ? books.update(write.id, write.changes, write.expected)
        : books.remove(write.id, write.expected);
  return result instanceof BookChangedError ? { failed: "changed" } : { value: result };
}

/**
 * Applies the writes in one transaction, so they share one fsync, and tells what each came
 * to once it has committed. One write's failure must not fail the others: when the group
 * fails, they are replayed one by one (unless the database is locked: then each would be).
 */
export function commitGroup(
  db: DatabaseSync,
  books: BookStatements,
  writes: BookWrite[],
): Outcome[] {
  const commit = (group: BookWrite[]) =>
    transaction(db, () => group.map((write) => apply(books, write)));
  try {
    return commit(writes);
  } catch (error) {
    const outcome = failure(error);
    if (writes.length === 1 || ("failed" in outcome && outcome.failed === "unavailable")) {
      return writes.map(() => outcome);
    }
    return writes.map((write) => {
      try {
        return commit([write])[0] as Outcome;
      } catch (single) {
        return failure(single);
      }
    });
  }
}
