// A plain PostgreSQL connection for tests and benchmarks that look at or change the database
// behind the service's back: sql`…` runs one statement, script() several.
import pg from "pg";
import sqlTag from "sql-template-tag";
import type { NewBook } from "../../src/rules/book.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { DERIVED_COLUMNS, DERIVED_VALUES, derivedArrays } from "../../src/store/postgres/books.js";
import { types } from "../../src/store/postgres/pool.js";

/** Where the tests' PostgreSQL is when TEST_DATABASE_URL does not say. */
export const DEFAULT_TEST_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";

/** The tests' PostgreSQL: TEST_DATABASE_URL, else the local default. */
export const testDatabaseUrl = () => process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;

export interface PgConnection {
  sql<R = Record<string, unknown>>(
    strings: TemplateStringsArray,
    ...values: unknown[]
  ): Promise<R[]>;
  script(text: string): Promise<void>;
  end(): Promise<void>;
}

export async function pgConnect(url: string): Promise<PgConnection> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 5_000,
    // As the service reads them: BIGINT as a number.
    types,
  });
  client.on("error", () => {});
  await client.connect();
  return {
    sql: async <R>(strings: TemplateStringsArray, ...values: unknown[]) =>
      (await client.query(sqlTag(strings, ...values))).rows as R[],
    script: async (text) => {
      await client.query(text);
    },
    end: () => client.end().catch(() => {}),
  };
}

/**
 * Writes the books in one statement, with ids in their order and with their search words and
 * sort keys as the store writes them: a large catalogue in seconds.
 */
export async function insertStoredBooks(db: PgConnection, books: readonly NewBook[]) {
  await db.sql`INSERT INTO books (title, author, year, ${DERIVED_COLUMNS})
    SELECT t, a, y, ${DERIVED_VALUES}
    FROM unnest(${books.map((b) => b.title)}::text[], ${books.map((b) => b.author)}::text[],
      ${books.map((b) => b.year)}::int[], ${derivedArrays(books)})
      WITH ORDINALITY AS x(t, a, y, tw, aw, tk, ak, n)
    ORDER BY n`;
}

/** Applies the migrations up to `version` as a build of that version would have, recorded. */
export async function migrateThrough(db: PgConnection, version: number): Promise<void> {
  await db.sql`CREATE TABLE schema_migrations (
    version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
  for (const step of MIGRATIONS.filter((m) => m.version <= version)) {
    await db.script(step.postgres);
    await db.sql`INSERT INTO schema_migrations (version) VALUES (${step.version})`;
  }
}
