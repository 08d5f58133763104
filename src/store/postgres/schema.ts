import sql, { empty } from "sql-template-tag";
import { type AppliedMigration, describeMigration } from "../applied-migrations.js";
import { withDeadline } from "../deadline.js";
import { pendingMigrations } from "../migrations.js";
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
 * Brings the schema up to date in one transaction, within `timeoutMs`. It needs no session of
 * its own (the lock is the transaction's), so it runs through a transaction pooler too.
 */
export async function migrate(
  db: Db,
  timeoutMs = MIGRATION_TIMEOUT_SECONDS * 1000,
): Promise<AppliedMigration[]> {
  const late = () =>
    new Error(
      `the migrations did not end within ${timeoutMs / 1000} s (another instance migrating it, or a very large catalogue: docs/postgresql.md)`,
    );
  // A statement is bounded by the whole, not by the store timeout; the whole ends first.
  const migrating = db.transaction(
    async (tx) => {
      // Instances starting together wait here in turn; the first applies, the rest find it done.
      await tx.query(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await tx.query(sql`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`);
      const rows = await tx.query<{ version: number }>(sql`SELECT version FROM schema_migrations`);
      const applied: AppliedMigration[] = [];
      for (const step of pendingMigrations(rows.map((row) => row.version))) {
        await tx.query(step.postgres);
        if (step.derive !== undefined) await derive(tx, step.derive === "words and keys");
        await tx.query(sql`INSERT INTO schema_migrations (version) VALUES (${step.version})`);
        applied.push(describeMigration(step, step.postgres, step.derive !== undefined));
      }
      return applied;
    },
    { timeoutMs },
  );
  return withDeadline(migrating, timeoutMs, late);
}

/**
 * Writes every book's search words, and with `keys` its sort keys (see Migration.derive), a
 * thousand books a statement, in id order.
 */
async function derive(tx: Queryable, keys: boolean): Promise<void> {
  for (let after = 0; ; ) {
    const books = await tx.query<{ id: number; title: string; author: string }>(sql`
      SELECT id, title, author FROM books WHERE id > ${after} ORDER BY id LIMIT 1000`);
    const last = books.at(-1);
    if (last === undefined) return;
    const setKeys = keys ? sql`, title_key = w.tk, author_key = w.ak` : empty;
    await tx.query(sql`UPDATE books SET
        title_words = array_to_tsvector(string_to_array(w.tw, ' ')),
        author_words = array_to_tsvector(string_to_array(w.aw, ' ')) ${setKeys}
      FROM unnest(${books.map((b) => b.id)}::bigint[], ${derivedArrays(books)})
        AS w(id, tw, aw, tk, ak)
      WHERE books.id = w.id`);
    after = last.id;
  }
}
