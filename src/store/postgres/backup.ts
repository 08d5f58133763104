// Backup and restore on PostgreSQL: a snapshot is one REPEATABLE READ transaction read
// through a cursor; a restore is one transaction that holds off other writers until it ends.
import sql, { raw } from "sql-template-tag";
import { type Book, MAX_BOOK_ID } from "../../rules/book.js";
import {
  BACKUP_PAGE_SIZE,
  type BackupStore,
  CatalogueNotEmptyError,
  type CatalogueSnapshot,
  checkRestoredNextId,
} from "../backup.js";
import { pendingMigrations } from "../migrations.js";
import { DERIVED_COLUMNS, DERIVED_VALUES, derivedArrays } from "./books.js";
import { withStoreErrors } from "./errors.js";
import type { Db, Queryable } from "./pool.js";
import { migrate } from "./schema.js";
import { connect } from "./store.js";

/**
 * Connects to the catalogue at `url` for a backup (`read`: its schema must be there, and is
 * not changed) or a restore (migrated first).
 */
export async function openPostgresBackup(
  url: string,
  description: string,
  purpose: "read" | "restore",
): Promise<BackupStore> {
  const options = {
    poolSize: 1,
    // One page, or the restore's writes of one, at most; a store that stalls ends the command.
    timeoutMs: 60_000,
    preparedStatements: false,
    description,
    applicationName: `book-catalogue ${purpose === "read" ? "backup" : "restore"}`,
    ...(purpose === "read" ? { failure: "cannot read the catalogue at" } : {}),
  };
  const db = await connect(url, options, purpose === "read" ? checkSchema : migrate);
  return {
    readSnapshot: (read) => withStoreErrors(() => readSnapshot(db, read)),
    restore: (pages, nextId, replace) => withStoreErrors(() => restore(db, pages, nextId, replace)),
    close: () => db.end(),
  };
}

/** A catalogue's schema, at a version this build reads; else why not. */
async function checkSchema(db: Db): Promise<void> {
  const [table] = await db.query(sql`SELECT to_regclass('schema_migrations') AS name`);
  if (table?.name === null) {
    throw new Error("it holds no catalogue (no schema_migrations table)");
  }
  const rows = await db.query<{ version: number }>(sql`SELECT version FROM schema_migrations`);
  pendingMigrations(rows.map((row) => row.version));
}

function readSnapshot<T>(db: Db, read: (snapshot: CatalogueSnapshot) => Promise<T>): Promise<T> {
  return db.transaction(
    async (tx) => {
      // The snapshot is taken at the first statement: the count is of it.
      const [{ count } = { count: 0 }] = await tx.query<{ count: number }>(sql`
        SELECT count(*)::bigint AS count FROM books`);
      // A sequence is outside every snapshot: read after the snapshot began, it is at least
      // every id the snapshot holds, and every id given before.
      const [{ next } = { next: 1 }] = await tx.query<{ next: number }>(sql`
        SELECT ${NEXT_ID} AS next`);
      async function* pages(): AsyncGenerator<Book[]> {
        // Pages by id, all in the transaction's one snapshot.
        for (let after = 0; ; ) {
          const rows = await tx.query<Book>(sql`SELECT id, title, author, year FROM books
            WHERE id > ${after} ORDER BY id LIMIT ${BACKUP_PAGE_SIZE}`);
          const last = rows.at(-1);
          if (last === undefined) return;
          yield rows;
          after = last.id;
        }
      }
      return read({ count, nextId: next, pages });
    },
    { mode: "ISOLATION LEVEL REPEATABLE READ READ ONLY" },
  );
}

/**
 * The id the next new book takes: one past the sequence's last value, and never past the
 * largest id's next, though each create refused past it moves the sequence on (books.ts).
 */
const NEXT_ID = raw(`least(coalesce(pg_sequence_last_value(
  pg_get_serial_sequence('books', 'id')::regclass), 0), ${MAX_BOOK_ID}) + 1`);

async function restore(
  db: Db,
  pages: AsyncIterable<Book[]>,
  nextId: number,
  replace: boolean,
): Promise<number> {
  checkRestoredNextId(nextId);
  return db.transaction(async (tx) => {
    // Other writers wait until the restore ends, so no create takes an id it restores.
    await tx.query(sql`LOCK TABLE books IN SHARE ROW EXCLUSIVE MODE`);
    const [{ count } = { count: 0 }] = await tx.query<{ count: number }>(sql`
      SELECT count(*)::bigint AS count FROM books`);
    if (count > 0 && !replace) throw new CatalogueNotEmptyError(count);
    if (count > 0) await tx.query(sql`DELETE FROM books`);
    for await (const page of pages) await insertWithIds(tx, page);
    // A new generation: no instance may serve what it kept of the catalogue replaced.
    await tx.query(sql`UPDATE catalogue_generation SET token = gen_random_uuid()::text`);
    // Last, as a sequence does not roll back: never below what either catalogue has given.
    await tx.query(sql`SELECT setval(pg_get_serial_sequence('books', 'id')::regclass, ${nextId - 1})
      WHERE ${nextId - 1} > coalesce(pg_sequence_last_value(pg_get_serial_sequence('books', 'id')::regclass), 0)`);
    const [{ next } = { next: nextId }] = await tx.query<{ next: number }>(sql`
      SELECT ${NEXT_ID} AS next`);
    return next;
  });
}

async function insertWithIds(tx: Queryable, books: readonly Book[]): Promise<void> {
  await tx.query(sql`INSERT INTO books (id, title, author, year, ${DERIVED_COLUMNS})
    OVERRIDING SYSTEM VALUE
    SELECT id, title, author, year, ${DERIVED_VALUES}
    FROM unnest(${books.map((b) => b.id)}::bigint[], ${books.map((b) => b.title)}::text[],
      ${books.map((b) => b.author)}::text[], ${books.map((b) => b.year)}::integer[],
      ${derivedArrays(books)}) AS t(id, title, author, year, tw, aw, tk, ak)`);
}
