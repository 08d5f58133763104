import type postgres from "postgres";
import { pendingMigrations } from "../migrations.js";
import { lexemes } from "./search-index.js";

// pg_advisory_xact_lock key shared by every instance that migrates this database.
const MIGRATION_LOCK = 0x626f6f6b; // "book"

export async function migrate(sql: postgres.Sql): Promise<void> {
  await sql.begin(async (tx) => {
    // Instances starting together wait here in turn; the first applies, the rest find it done.
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`;
    const rows = await tx<{ version: number }[]>`SELECT version FROM schema_migrations`;
    for (const step of pendingMigrations(rows.map((row) => row.version))) {
      await tx.unsafe(step.postgres);
      if (step.indexWords) await indexWords(tx);
      await tx`INSERT INTO schema_migrations (version) VALUES (${step.version})`;
    }
  });
}

/** Writes every book's search words, a thousand books a statement, in id order. */
async function indexWords(tx: postgres.TransactionSql): Promise<void> {
  for (let after = 0; ; ) {
    const books = await tx<{ id: number; title: string; author: string }[]>`
      SELECT id, title, author FROM books WHERE id > ${after} ORDER BY id LIMIT 1000`;
    const last = books.at(-1);
    if (last === undefined) return;
    await tx`UPDATE books SET
        title_words = array_to_tsvector(string_to_array(w.title, ' ')),
        author_words = array_to_tsvector(string_to_array(w.author, ' '))
      FROM unnest(${books.map((b) => b.id)}::bigint[], ${books.map((b) => lexemes(b.title))}::text[],
        ${books.map((b) => lexemes(b.author))}::text[]) AS w(id, title, author)
      WHERE books.id = w.id`;
    after = last.id;
  }
}
