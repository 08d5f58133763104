import sql, { empty } from "sql-template-tag";
import {
  type AppliedMigration,
  describeMigration,
  MIGRATION_BATCH,
  type MigrationLog,
  type MigrationTurn,
  takeTurns,
} from "../applied-migrations.js";
import { withDeadline } from "../deadline.js";
import { derivesOn, pendingMigrations } from "../migrations.js";
import { derivedArrays } from "./books.js";
import type { Db, Queryable } from "./pool.js";

// pg_advisory_xact_lock key shared by every instance that migrates this database.
export const MIGRATION_LOCK = 0x626f6f6b; // "book"

/**
 * How long migrations may take, waiting for another instance's included: writing the derived
 * columns of a large catalogue takes minutes (docs/postgresql.md), far past start-up's bound
 * on reaching PostgreSQL.
 */
export const MIGRATION_TIMEOUT_SECONDS = 3600;

/**
 * Brings the schema up to date within `timeoutMs`, in turns (transactions) under the migration
 * lock: instances starting together take turns, and each step is applied once. A step that
 * writes every book writes MIGRATION_BATCH books a turn, recording how far it has come: a
 * start after a crash, or another instance, carries on from there. It needs no session of its
 * own (the lock is each transaction's), so it runs through a transaction pooler too.
 */
export async function migrate(
  db: Db,
  timeoutMs = MIGRATION_TIMEOUT_SECONDS * 1000,
  log?: MigrationLog,
): Promise<void> {
  const late = () =>
    new Error(
      `the migrations did not end within ${timeoutMs / 1000} s (another instance migrating it, or a very large catalogue: docs/postgresql.md)`,
    );
  const deadline = Date.now() + timeoutMs;
  const left = () => deadline - Date.now();
  // A statement is bounded by what is left of the whole; the whole ends first.
  const migrating = takeTurns(
    () => db.transaction((tx) => nextTurn(tx), { timeoutMs: left() }),
    (through) => countBooks(db, through),
    log,
    () => left() > 0,
  );
  return withDeadline(migrating, timeoutMs, late);
}

/**
 * Applies the steps left, up to a batch of books written by a step that writes every book
 * and has more left. Instances starting together wait for the lock in turn; each finds
 * where the last one stopped.
 */
async function nextTurn(tx: Queryable): Promise<MigrationTurn> {
  await tx.query(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
  await tx.query(sql`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`);
  // A step that writes every book, begun and not ended: the last book id written.
  await tx.query(sql`CREATE TABLE IF NOT EXISTS schema_migration_progress (
    version INTEGER PRIMARY KEY,
    derived_through BIGINT NOT NULL
  )`);
  const rows = await tx.query<{ version: number }>(sql`SELECT version FROM schema_migrations`);
  const applied: AppliedMigration[] = [];
  for (const step of pendingMigrations(rows.map((row) => row.version))) {
    const [begun] = await tx.query<{ n: string }>(sql`
      SELECT derived_through AS n FROM schema_migration_progress WHERE version = ${step.version}`);
    if (begun === undefined) await tx.query(step.postgres);
    const after = Number(begun?.n ?? 0);
    const through = derivesOn(step, "postgres")
      ? await derive(tx, step.derive === "words and keys", after)
      : undefined;
    if (through !== undefined) {
      await tx.query(sql`INSERT INTO schema_migration_progress VALUES (${step.version}, ${through})
        ON CONFLICT (version) DO UPDATE SET derived_through = EXCLUDED.derived_through`);
      return { applied, deriving: { version: step.version, through } };
    }
    await tx.query(sql`DELETE FROM schema_migration_progress WHERE version = ${step.version}`);
    await tx.query(sql`INSERT INTO schema_migrations (version) VALUES (${step.version})`);
    applied.push(describeMigration(step, step.postgres, derivesOn(step, "postgres")));
  }
  return { applied };
}

/** The books, and those up to `through` (a start before this one wrote them). */
async function countBooks(db: Db, through: number): Promise<{ of: number; done: number }> {
  const [row] = await db.query<{ of: string; done: string }>(sql`
    SELECT count(*) AS of, count(*) FILTER (WHERE id <= ${through}) AS done FROM books`);
  return { of: Number(row?.of ?? 0), done: Number(row?.done ?? 0) };
}

/**
 * Writes the search words of up to MIGRATION_BATCH books after `after`, and with `keys` their
 * sort keys (see Migration.derive), a thousand a statement in id order; returns the last id
 * written, or undefined when there was none left.
 */
async function derive(tx: Queryable, keys: boolean, after: number): Promise<number | undefined> {
  let last: number | undefined;
  for (let written = 0; written < MIGRATION_BATCH; written += 1000) {
    const books = await tx.query<{ id: number; title: string; author: string }>(sql`
      SELECT id, title, author FROM books WHERE id > ${last ?? after} ORDER BY id LIMIT 1000`);
    if (books.length === 0) break;
    const setKeys = keys ? sql`, title_key = w.tk, author_key = w.ak` : empty;
    await tx.query(sql`UPDATE books SET
        title_words = array_to_tsvector(string_to_array(w.tw, ' ')),
        author_words = array_to_tsvector(string_to_array(w.aw, ' ')) ${setKeys}
      FROM unnest(${books.map((b) => b.id)}::bigint[], ${derivedArrays(books)})
        AS w(id, tw, aw, tk, ak)
      WHERE books.id = w.id`);
    last = books.at(-1)?.id;
  }
  return last;
}
