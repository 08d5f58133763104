/**
 * Versioned schema steps, applied in order at start-up and recorded in `schema_migrations`.
 * A step is never edited once released: a change is a new step.
 */
export interface Migration {
  readonly version: number;
  readonly sqlite: string;
  readonly postgres: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    // AUTOINCREMENT: a deleted book's id is never handed to a new book.
    sqlite: `
      CREATE TABLE books (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        title TEXT NOT NULL,
        author TEXT NOT NULL,
        year INTEGER NOT NULL
      ) STRICT;`,
    postgres: `
      CREATE TABLE books (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        title TEXT NOT NULL,
        author TEXT NOT NULL,
        year INTEGER NOT NULL
      );`,
  },
  {
    version: 2,
    // Listing filters. q: trigram indexes make a case-insensitive substring search of title
    // and author fast at a million books; author and year: plain indexes ending in the id, so
    // a filtered page is an index range read in id order.
    sqlite: `
      CREATE INDEX books_author_id ON books (author, id);
      CREATE INDEX books_year_id ON books (year, id);
      CREATE VIRTUAL TABLE books_text USING fts5(
        title, author, content='books', content_rowid='id', tokenize='trigram'
      );
      INSERT INTO books_text (rowid, title, author) SELECT id, title, author FROM books;
      CREATE TRIGGER books_text_insert AFTER INSERT ON books BEGIN
        INSERT INTO books_text (rowid, title, author) VALUES (new.id, new.title, new.author);
      END;
      CREATE TRIGGER books_text_delete AFTER DELETE ON books BEGIN
        INSERT INTO books_text (books_text, rowid, title, author)
          VALUES ('delete', old.id, old.title, old.author);
      END;
      CREATE TRIGGER books_text_update AFTER UPDATE OF title, author ON books BEGIN
        INSERT INTO books_text (books_text, rowid, title, author)
          VALUES ('delete', old.id, old.title, old.author);
        INSERT INTO books_text (rowid, title, author) VALUES (new.id, new.title, new.author);
      END;`,
    // pg_trgm lives in public, so a schema dropped with CASCADE never takes it along.
    postgres: `
      CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
      CREATE INDEX books_author_id ON books (author, id);
      CREATE INDEX books_year_id ON books (year, id);
      CREATE INDEX books_title_trgm ON books USING gin (title public.gin_trgm_ops);
      CREATE INDEX books_author_trgm ON books USING gin (author public.gin_trgm_ops);`,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** The steps still to apply, or an error when the database is newer than this build. */
export function pendingMigrations(applied: readonly number[]): readonly Migration[] {
  const newest = Math.max(0, ...applied);
  if (newest > LATEST_VERSION) {
    throw new Error(
      `the database schema is at version ${newest}, newer than this build knows (${LATEST_VERSION})`,
    );
  }
  const done = new Set(applied);
  return MIGRATIONS.filter((m) => !done.has(m.version));
}
