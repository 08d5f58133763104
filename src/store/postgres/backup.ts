// Backup and restore on PostgreSQL: a snapshot is one REPEATABLE READ transaction read
// through a cursor; a restore is one transaction that holds off other writers until it ends,
// its books inserted first and their indexes built after.
import sql, { raw } from "sql-template-tag";
import { type Book, MAX_BOOK_ID } from "../../rules/book.js";
import {
  ACCOUNT_COLUMNS,
  type AccountRow,
  type StoredAccount,
  storedAccount,
} from "../accounts.js";
import {
  BACKUP_PAGE_SIZE,
  type BackupStore,
  CatalogueNotEmptyError,
  type CatalogueSnapshot,
  checkRestoredNextId,
} from "../backup.js";
import { pendingMigrations } from "../migrations.js";
import { DERIVED_COLUMNS, DERIVED_VALUES, derivedArrays } from "./books.js";
import { restartChangeLog } from "./changes.js";
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
  pageTimeoutMs = 60_000,
): Promise<BackupStore> {
  const options = {
    poolSize: 1,
    // One page, or the restore's writes of one, at most; a store that stalls ends the command.
    timeoutMs: pageTimeoutMs,
    preparedStatements: false,
    description,
    applicationName: `book-catalogue ${purpose === "read" ? "backup" : "restore"}`,
    ...(purpose === "read" ? { failure: "cannot read the catalogue at" } : {}),
  };
  const db = await connect(url, options, purpose === "read" ? checkSchema : migrate);
  return {
    readSnapshot: (read) => withStoreErrors(() => readSnapshot(db, read)),
    restore: (pages, nextId, replace, accounts) =>
      withStoreErrors(() => restore(db, pages, nextId, replace, accounts)),
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
      const accounts = await tx.query<AccountRow>(sql`
        SELECT ${raw(ACCOUNT_COLUMNS)} FROM accounts ORDER BY id`);
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
      return read({ count, nextId: next, pages, accounts: accounts.map(storedAccount) });
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
  accounts: readonly StoredAccount[] | undefined,
): Promise<number> {
  checkRestoredNextId(nextId);
  return db.transaction(async (tx) => {
    await emptyCatalogue(tx, replace, accounts !== undefined);
    if (accounts !== undefined) await insertAccounts(tx, accounts);
    // The books first, then their indexes, each built once from its own definition: kept
    // while the rows went in, they took half the time (docs/performance-log.md).
    const indexes = await dropBookIndexes(tx);
    await insertBooks(tx, pages);
    // Each one statement, not a script: a script keeps the bound of the statement before it
    // (statement.ts), a page's minute, which a word index of 10^7 books outlasts.
    for (const definition of indexes) {
      await tx.query(raw(definition), { timeoutMs: INDEX_BUILD_TIMEOUT_MS });
    }
    // The planner's statistics of the new rows, at the commit: not a minute or more later,
    // when autovacuum would come to them, the searches until then planned on none.
    await tx.query(raw("ANALYZE books, books_years"), { timeoutMs: INDEX_BUILD_TIMEOUT_MS });
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

/**
 * Refuses a catalogue that holds books (or, when the backup holds accounts, accounts) unless
 * `replace`, and then removes them, and restarts the change log. Other writers of either wait
 * until the restore ends, so no create takes an id it restores; book writers first for the
 * lock of book writes (statement.ts), as any transaction that writes books does.
 */
async function emptyCatalogue(tx: Queryable, replace: boolean, withAccounts: boolean) {
  await tx.query(sql`LOCK TABLE books IN SHARE ROW EXCLUSIVE MODE`, { lockBookWrites: true });
  if (withAccounts) await tx.query(sql`LOCK TABLE accounts IN SHARE ROW EXCLUSIVE MODE`);
  const [{ count, held } = { count: 0, held: 0 }] = await tx.query<{
    count: number;
    held: number;
  }>(sql`SELECT (SELECT count(*) FROM books)::bigint AS count,
    ${withAccounts ? sql`(SELECT count(*) FROM accounts)::bigint` : sql`0`} AS held`);
  if ((count > 0 || held > 0) && !replace) throw new CatalogueNotEmptyError(count, held);
  if (count > 0) await tx.query(sql`DELETE FROM books`);
  if (held > 0) await tx.query(sql`DELETE FROM accounts`);
  await restartChangeLog(tx);
}

/** How long one index of a large catalogue may take to build, past a statement's usual bound. */
const INDEX_BUILD_TIMEOUT_MS = 3_600_000;

/**
 * Drops the indexes of the books' tables that no constraint needs (their primary keys stay),
 * and returns the statements that make each again, as it was. Readers of the catalogue wait
 * for the restore's end, as writers do: the service is stopped for a restore.
 */
async function dropBookIndexes(tx: Queryable): Promise<string[]> {
  const indexes = await tx.query<{ name: string; definition: string }>(sql`
    SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
    FROM pg_index i
    WHERE i.indrelid IN ('books'::regclass, 'books_years'::regclass)
      AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid)
    ORDER BY 1`);
  for (const { name } of indexes) await tx.query(`DROP INDEX ${name}`);
  return indexes.map((index) => index.definition);
}

/**
 * Inserts the pages in order, PostgreSQL writing one while the next is read and its search
 * words made here. (COPY instead was no faster, and held more memory: docs/performance-log.md.)
 */
async function insertBooks(tx: Queryable, pages: AsyncIterable<Book[]>): Promise<void> {
  let writing = Promise.resolve();
  for await (const page of pages) {
    await writing;
    writing = insertWithIds(tx, page);
    // Awaited at the next page or the end; until then, a failure waits there.
    writing.catch(() => {});
  }
  await writing;
}

/** The backup's accounts, ids and all; the identity then never gives an id restored. */
async function insertAccounts(tx: Queryable, accounts: readonly StoredAccount[]) {
  for (let start = 0; start < accounts.length; start += BACKUP_PAGE_SIZE) {
    const page = accounts.slice(start, start + BACKUP_PAGE_SIZE);
    await tx.query(sql`INSERT INTO accounts (${raw(ACCOUNT_COLUMNS)}) OVERRIDING SYSTEM VALUE
      SELECT * FROM unnest(${page.map((a) => a.id)}::bigint[], ${page.map((a) => a.name)}::text[],
        ${page.map((a) => a.role)}::text[], ${page.map((a) => a.enabled)}::boolean[],
        ${page.map((a) => a.passwordHash)}::text[], ${page.map((a) => a.tokensValidFrom)}::bigint[])`);
  }
  const last = accounts.at(-1)?.id ?? 0;
  await tx.query(sql`SELECT setval(pg_get_serial_sequence('accounts', 'id')::regclass, ${last})
    WHERE ${last} > coalesce(pg_sequence_last_value(pg_get_serial_sequence('accounts', 'id')::regclass), 0)`);
}

async function insertWithIds(tx: Queryable, books: readonly Book[]): Promise<void> {
  await tx.query(sql`INSERT INTO books (id, title, author, year, ${DERIVED_COLUMNS})
    OVERRIDING SYSTEM VALUE
    SELECT id, title, author, year, ${DERIVED_VALUES}
    FROM unnest(${books.map((b) => b.id)}::bigint[], ${books.map((b) => b.title)}::text[],
      ${books.map((b) => b.author)}::text[], ${books.map((b) => b.year)}::integer[],
      ${derivedArrays(books)}) AS t(id, title, author, year, tw, aw, tk, ak)`);
}
