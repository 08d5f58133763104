// Backup and restore on PostgreSQL: a snapshot is one REPEATABLE READ transaction read
// through a cursor; a restore is one transaction that holds off other writers until it ends.
import type postgres from "postgres";
import type { Book } from "../../rules/book.js";
import {
  BACKUP_PAGE_SIZE,
  type BackupStore,
  CatalogueNotEmptyError,
  type CatalogueSnapshot,
} from "../backup.js";
import { pendingMigrations } from "../migrations.js";
import { withStoreErrors } from "./errors.js";
import { migrate } from "./schema.js";
import { lexemes } from "./search-index.js";
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
    connectTimeoutSeconds: 10,
    description,
    applicationName: `book-catalogue ${purpose === "read" ? "backup" : "restore"}`,
    ...(purpose === "read" ? { failure: "cannot read the catalogue at" } : {}),
  };
  const sql = await connect(url, options, purpose === "read" ? checkSchema : migrate);
  return {
    readSnapshot: (read) => withStoreErrors(() => readSnapshot(sql, read)),
    restore: (pages, nextId, replace) =>
      withStoreErrors(() => restore(sql, pages, nextId, replace)),
    close: () => sql.end({ timeout: 5 }),
  };
}

/** A catalogue's schema, at a version this build reads; else why not. */
async function checkSchema(sql: postgres.Sql): Promise<void> {
  const [table] = await sql`SELECT to_regclass('schema_migrations') AS name`;
  if (table?.name === null) {
    throw new Error("it holds no catalogue (no schema_migrations table)");
  }
  const rows = await sql<{ version: number }[]>`SELECT version FROM schema_migrations`;
  pendingMigrations(rows.map((row) => row.version));
}

function readSnapshot<T>(
  sql: postgres.Sql,
  read: (snapshot: CatalogueSnapshot) => Promise<T>,
): Promise<T> {
  return sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    // The snapshot is taken at the first statement: the count is of it.
    const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
      SELECT count(*)::bigint AS count FROM books`;
    // A sequence is outside every snapshot: read after the snapshot began, it is at least
    // every id the snapshot holds, and every id given before.
    const [{ next } = { next: 1 }] = await tx<{ next: number }[]>`
      SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('books', 'id')::regclass), 0) + 1 AS next`;
    async function* pages(): AsyncGenerator<Book[]> {
      const cursor = tx<Book[]>`SELECT id, title, author, year FROM books ORDER BY id`.cursor(
        BACKUP_PAGE_SIZE,
      );
      for await (const rows of cursor)
        yield rows.map(({ id, title, author, year }) => ({ id, title, author, year }));
    }
    return read({ count, nextId: next, pages });
  }) as Promise<T>;
}

async function restore(
  sql: postgres.Sql,
  pages: AsyncIterable<Book[]>,
  nextId: number,
  replace: boolean,
): Promise<number> {
  return sql.begin(async (tx) => {
    // Other writers wait until the restore ends, so no create takes an id it restores.
    await tx`LOCK TABLE books IN SHARE ROW EXCLUSIVE MODE`;
    const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
      SELECT count(*)::bigint AS count FROM books`;
    if (count > 0 && !replace) throw new CatalogueNotEmptyError(count);
    if (count > 0) await tx`DELETE FROM books`;
    for await (const page of pages) await insertWithIds(tx, page);
    // Last, as a sequence does not roll back: never below what either catalogue has given.
    await tx`SELECT setval(pg_get_serial_sequence('books', 'id')::regclass, ${nextId - 1})
      WHERE ${nextId - 1} > coalesce(pg_sequence_last_value(pg_get_serial_sequence('books', 'id')::regclass), 0)`;
    const [{ next } = { next: nextId }] = await tx<{ next: number }[]>`
      SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('books', 'id')::regclass), 0) + 1 AS next`;
    return next;
  }) as Promise<number>;
}

async function insertWithIds(tx: postgres.TransactionSql, books: readonly Book[]): Promise<void> {
  await tx`INSERT INTO books (id, title, author, year, title_words, author_words)
    OVERRIDING SYSTEM VALUE
    SELECT id, title, author, year, array_to_tsvector(string_to_array(tw, ' ')),
      array_to_tsvector(string_to_array(aw, ' '))
    FROM unnest(${books.map((b) => b.id)}::bigint[], ${books.map((b) => b.title)}::text[],
      ${books.map((b) => b.author)}::text[], ${books.map((b) => b.year)}::integer[],
      ${books.map((b) => lexemes(b.title))}::text[], ${books.map((b) => lexemes(b.author))}::text[])
      AS t(id, title, author, year, tw, aw)`;
}
