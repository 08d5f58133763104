/**
 * Versioned schema steps, applied in order at start-up and recorded in `schema_migrations`.
 * A step is never edited once released: a change is a new step.
 */
export interface Migration {
  readonly version: number;
  readonly sqlite: string;
  readonly postgres: string;
  /**
   * After the step, what each book derives is written: its search words, and from version 7
   * on its sort keys too. They are folded in code (rules/search.ts), the same way on both
   * stores, so SQL alone cannot fill them. "postgres words": the words on PostgreSQL only;
   * "sqlite unspaced words": on SQLite only, the words of the books that hold a run written
   * without spaces (the others' words are unchanged).
   */
  readonly derive?: "words" | "words and keys" | "postgres words" | "sqlite unspaced words";
}

/** Whether the step writes what books derive on this store (see Migration.derive). */
export function derivesOn(step: Migration, store: "sqlite" | "postgres"): boolean {
  if (step.derive === undefined) return false;
  return step.derive !== (store === "sqlite" ? "postgres words" : "sqlite unspaced words");
}

/**
 * SQLite: the trigger of version 10 that counts deleted books. A restore drops it while it
 * empties the catalogue (a row trigger makes SQLite delete row by row, some 7 µs a book),
 * counts that as one change, and makes it again. Part of version 10: never edited.
 */
export const SQLITE_DELETE_COUNTED = `CREATE TRIGGER books_delete_counted AFTER DELETE ON books
        BEGIN UPDATE books_change_count SET n = n + 1; END`;

/** PostgreSQL: the channel a commit of book changes is told on (postgres/listen.ts). */
export const CHANGES_CHANNEL = "book_catalogue_changes";

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
    // Listing filters by author and year: indexes ending in the id, so a filtered page is an
    // index range read in id order.
    sqlite: `
      CREATE INDEX books_author_id ON books (author, id);
      CREATE INDEX books_year_id ON books (year, id);`,
    postgres: `
      CREATE INDEX books_author_id ON books (author, id);
      CREATE INDEX books_year_id ON books (year, id);`,
  },
  {
    version: 3,
    // Listing sorts by title, author or year, then id. Titles and authors sort without regard
    // to case, so their indexes are built that way; the author index without case also serves
    // the exact author filter (the rows it finds are checked again), so it replaces v2's.
    // PostgreSQL compares lower() bytes ("C"), the same order SQLite's NOCASE gives ASCII.
    sqlite: `
      DROP INDEX books_author_id;
      CREATE INDEX books_author_nocase_id ON books (author COLLATE NOCASE, id);
      CREATE INDEX books_title_nocase_id ON books (title COLLATE NOCASE, id);`,
    postgres: `
      DROP INDEX books_author_id;
      CREATE INDEX books_author_lower_id ON books ((lower(author) COLLATE "C"), id);
      CREATE INDEX books_title_lower_id ON books ((lower(title) COLLATE "C"), id);`,
  },
  {
    version: 4,
    // Text search (q): the folded words of each book's title and author, indexed for word
    // prefixes. SQLite: a contentless FTS5 table whose rows the store writes in the same
    // transaction as the book (the "ascii" tokenizer leaves the folded words as they are).
    // Prefix indexes of 2, 3, 4 and 6 characters: a prefix query without one merges the lists
    // of every word it starts, many times slower at a million books; each costs little on
    // writes (docs/performance.md). PostgreSQL:
    // tsvectors built from the same words, one per field so an update of one field need not
    // read the other, and a GIN index over both.
    sqlite: `
      CREATE VIRTUAL TABLE books_search USING fts5(
        words, content='', contentless_delete=1, tokenize='ascii', prefix='2 3 4 6');`,
    postgres: `
      ALTER TABLE books
        ADD COLUMN title_words tsvector NOT NULL DEFAULT ''::tsvector,
        ADD COLUMN author_words tsvector NOT NULL DEFAULT ''::tsvector;
      CREATE INDEX books_words ON books USING gin ((title_words || author_words));`,
    derive: "words",
  },
  {
    version: 5,
    // The count of commits that changed books, so a listing cache can tell it is still right
    // whichever process or instance wrote. SQLite needs nothing: PRAGMA data_version moves
    // when another connection commits. PostgreSQL: every statement on books adds one to a
    // counter; counters are spread over slots by backend, so concurrent writers do not queue
    // on one row. A reader sums them: the sum only grows, and a commit shows in it exactly when
    // its rows show, in the same snapshot rules.
    sqlite: "-- nothing: PRAGMA data_version",
    postgres: `
      CREATE TABLE books_changes (slot INTEGER PRIMARY KEY, commits BIGINT NOT NULL);
      CREATE FUNCTION books_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO books_changes AS c VALUES (pg_backend_pid() % 128, 1)
          ON CONFLICT (slot) DO UPDATE SET commits = c.commits + 1;
        RETURN NULL;
      END $$;
      CREATE TRIGGER books_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON books
        FOR EACH STATEMENT EXECUTE FUNCTION books_changed();`,
  },
  {
    version: 6,
    // PostgreSQL's caches are validated by more than the commit count, which a failover that
    // lost commits, or a restore, can lower and later raise back to a value an instance kept
    // reads under: a generation token, replaced by every restore, and a change stamp from a
    // sequence, which never hands out a value twice (commit-counter.ts).
    sqlite: "-- nothing: PRAGMA data_version",
    postgres: `
      CREATE TABLE catalogue_generation (token TEXT NOT NULL);
      INSERT INTO catalogue_generation VALUES (gen_random_uuid()::text);
      CREATE SEQUENCE books_change_stamps;
      ALTER TABLE books_changes ADD COLUMN stamp BIGINT NOT NULL DEFAULT 0;
      CREATE OR REPLACE FUNCTION books_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO books_changes AS c VALUES (pg_backend_pid() % 128, 1, nextval('books_change_stamps'))
          ON CONFLICT (slot) DO UPDATE SET commits = c.commits + 1, stamp = EXCLUDED.stamp;
        RETURN NULL;
      END $$;`,
  },
  {
    version: 7,
    // One order in every script, the same on both stores: titles and authors sort by a key
    // folded in code (rules/search.ts sortKey), compared by code point, then by id. The key
    // indexes replace v3's; the author key's also serves the exact author filter. The search
    // words are written again: the folding now composes (NFC), and scripts written without
    // spaces are indexed for matches anywhere inside a word.
    sqlite: `
      ALTER TABLE books ADD COLUMN title_key TEXT NOT NULL DEFAULT '';
      ALTER TABLE books ADD COLUMN author_key TEXT NOT NULL DEFAULT '';
      DROP INDEX books_title_nocase_id;
      DROP INDEX books_author_nocase_id;
      CREATE INDEX books_title_key_id ON books (title_key, id);
      CREATE INDEX books_author_key_id ON books (author_key, id);
      INSERT INTO books_search (books_search) VALUES ('delete-all');`,
    postgres: `
      ALTER TABLE books
        ADD COLUMN title_key TEXT COLLATE "C" NOT NULL DEFAULT '',
        ADD COLUMN author_key TEXT COLLATE "C" NOT NULL DEFAULT '';
      DROP INDEX books_title_lower_id;
      DROP INDEX books_author_lower_id;
      CREATE INDEX books_title_key_id ON books (title_key, id);
      CREATE INDEX books_author_key_id ON books (author_key, id);`,
    derive: "words and keys",
  },
  {
    version: 8,
    // PostgreSQL's search words again, now with their prefixes of 2, 3, 4 and 6 characters
    // as lexemes of their own (postgres/search-index.ts), as SQLite's prefix indexes already
    // are: a search word of those lengths is one exact lexeme, not a partial match.
    sqlite: "-- nothing: FTS5's prefix indexes",
    postgres: "-- nothing but the words",
    derive: "postgres words",
  },
  {
    version: 9,
    // PostgreSQL rewrites a row in place (a HOT update, no index written) only when no indexed
    // column changed; with books (year, id) a year change wrote every index of books, the
    // word index's dozens of entries among them, at 2.6 times the cost. The year's index moves
    // to a table of its own, books_years, which triggers keep equal to books in the statement
    // that changes it, whoever writes: the store, a restore, or psql (docs/postgresql.md).
    // The triggers' functions find the tables where this migration made them, whatever the
    // search_path of the session that writes (a psql session, a data-only pg_restore).
    // SQLite needs nothing: an update sets only the columns that change (sqlite/books.ts),
    // and SQLite writes only the indexes of the columns an update sets.
    sqlite: "-- nothing: SQLite writes only the indexes of the columns an update sets",
    postgres: `
      CREATE TABLE books_years (id BIGINT PRIMARY KEY, year INTEGER NOT NULL);
      INSERT INTO books_years SELECT id, year FROM books;
      CREATE INDEX books_years_year_id ON books_years (year, id);
      DROP INDEX books_year_id;
      CREATE FUNCTION books_years_follow() RETURNS trigger LANGUAGE plpgsql
        SET search_path FROM CURRENT AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO books_years SELECT id, year FROM added;
        ELSIF TG_OP = 'UPDATE' THEN
          UPDATE books_years y SET year = c.year FROM changed c
            WHERE y.id = c.id AND y.year <> c.year;
        ELSIF TG_OP = 'DELETE' THEN
          DELETE FROM books_years y USING removed r WHERE y.id = r.id;
        ELSE
          TRUNCATE books_years;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER books_years_added AFTER INSERT ON books REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION books_years_follow();
      CREATE TRIGGER books_years_changed AFTER UPDATE ON books REFERENCING NEW TABLE AS changed
        FOR EACH STATEMENT EXECUTE FUNCTION books_years_follow();
      CREATE TRIGGER books_years_removed AFTER DELETE ON books REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION books_years_follow();
      CREATE TRIGGER books_years_emptied AFTER TRUNCATE ON books
        FOR EACH STATEMENT EXECUTE FUNCTION books_years_follow();
      ALTER FUNCTION books_changed() SET search_path FROM CURRENT;
      ANALYZE books_years;`,
  },
  {
    version: 10,
    // SQLite keeps the books it read by id across its writer's commits, forgetting only those
    // a commit changed (sqlite/kept-reads.ts). The count of books ever changed or deleted,
    // kept by triggers whoever writes, shows every change another connection makes; such a
    // change forgets everything kept. PostgreSQL has its commit counter (versions 5 and 6).
    sqlite: `
      CREATE TABLE books_change_count (n INTEGER NOT NULL) STRICT;
      INSERT INTO books_change_count VALUES (0);
      CREATE TRIGGER books_change_counted AFTER UPDATE ON books
        BEGIN UPDATE books_change_count SET n = n + 1; END;
      ${SQLITE_DELETE_COUNTED};`,
    postgres: "-- nothing: the commit counter of versions 5 and 6",
  },
  {
    version: 11,
    // No id above 2^53 − 1 (MAX_BOOK_ID): ids travel as JSON numbers, and a larger one would
    // be read back as another. PostgreSQL: the create leaves out the rows whose id is past it
    // (postgres/books.ts), and a CHECK refuses any other writer's; NOT VALID, so a catalogue
    // that already holds such an id still opens. SQLite needs nothing: the create undoes an
    // insert past it (sqlite/books.ts; a trigger would cost every insert a statement journal).
    sqlite: "-- nothing: the create checks the id it was given",
    postgres: `
      ALTER TABLE books ADD CONSTRAINT books_id_limit
        CHECK (id <= ${Number.MAX_SAFE_INTEGER}) NOT VALID;`,
  },
  {
    version: 12,
    // Accounts (an extension: with none, the service is the contract's). The name is unique;
    // tokens_valid_from is in Unix seconds, as a token's issue time (its exp − 900) is.
    sqlite: `
      CREATE TABLE accounts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL CHECK (role IN ('reader', 'librarian', 'admin')),
        password_hash TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
        tokens_valid_from INTEGER NOT NULL
      ) STRICT;`,
    postgres: `
      CREATE TABLE accounts (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL CHECK (role IN ('reader', 'librarian', 'admin')),
        password_hash TEXT NOT NULL,
        enabled BOOLEAN NOT NULL DEFAULT true,
        tokens_valid_from BIGINT NOT NULL
      );`,
  },
  {
    version: 13,
    // The change log (an extension): one entry a change, written in the change's own
    // transaction (store/changes.ts). A book's JSON after and before it; `at` in ms since the
    // epoch; who by name and account (null account: the built-in pair). `changes_kept` holds
    // the last sequence trimmed: a `since` below it is 410. Both sequences never give a
    // number twice (AUTOINCREMENT, an identity), so a trimmed or restored log resumes above.
    // PostgreSQL tells its commits to the instances that LISTEN (CHANGES_LISTEN_URL).
    // A book's entries form a chain, newest first, with no index on the log: `books.last_change`
    // holds its newest entry (NULL for a book older than the log), each entry's `previous` the
    // one before it (NULL for none), and `deleted_books` the delete entry of each deleted book,
    // for its history and its restore. An index (book_id, seq) would cost every update of a
    // random book a page written at a random place; the chain costs a column set in the update
    // the book gets anyway (docs/performance.md).
    sqlite: `
      CREATE TABLE changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        op TEXT NOT NULL CHECK (op IN ('create', 'update', 'delete', 'restore')),
        book_id INTEGER NOT NULL,
        after TEXT,
        before TEXT,
        at INTEGER NOT NULL,
        who TEXT,
        account_id INTEGER,
        previous INTEGER
      ) STRICT;
      ALTER TABLE books ADD COLUMN last_change INTEGER;
      CREATE TABLE deleted_books (id INTEGER PRIMARY KEY, last_change INTEGER NOT NULL) STRICT;
      CREATE TABLE changes_kept (trimmed_through INTEGER NOT NULL) STRICT;
      INSERT INTO changes_kept VALUES (0);`,
    postgres: `
      CREATE TABLE changes (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        op TEXT NOT NULL CHECK (op IN ('create', 'update', 'delete', 'restore')),
        book_id BIGINT NOT NULL,
        after TEXT,
        before TEXT,
        at BIGINT NOT NULL,
        who TEXT,
        account_id BIGINT,
        previous BIGINT
      );
      ALTER TABLE books ADD COLUMN last_change BIGINT;
      CREATE TABLE deleted_books (id BIGINT PRIMARY KEY, last_change BIGINT NOT NULL);
      CREATE TABLE changes_kept (trimmed_through BIGINT NOT NULL);
      INSERT INTO changes_kept VALUES (0);
      CREATE FUNCTION changes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('${CHANGES_CHANNEL}', '');
        RETURN NULL;
      END $$;
      CREATE TRIGGER changes_notify AFTER INSERT ON changes
        FOR EACH STATEMENT EXECUTE FUNCTION changes_notify();`,
  },
  {
    version: 14,
    // When each book was last changed (created, updated or restored), in ms since the epoch,
    // as its entry's `at`: single-book answers carry it as Last-Modified. Kept with the book,
    // so it outlives the entry's trim. A book whose newest entry is still kept takes its time
    // now; one unchanged since before the log has none (NULL), and no Last-Modified.
    sqlite: `
      ALTER TABLE books ADD COLUMN changed_at INTEGER;
      UPDATE books SET changed_at = (SELECT at FROM changes WHERE seq = books.last_change)
        WHERE last_change IS NOT NULL;`,
    postgres: `
      ALTER TABLE books ADD COLUMN changed_at BIGINT;
      UPDATE books SET changed_at = changes.at FROM changes WHERE changes.seq = books.last_change;`,
  },
  {
    version: 15,
    // SQLite's search words gain each character of a run written without spaces as a word of
    // its own (sqlite/search-index.ts): FTS5 keeps no index of one-character prefixes, so a
    // search for one common Han character merged the lists of every suffix it starts (123 ms
    // at 10^7 books). Only the books that hold such a run are written again. On PostgreSQL
    // the same searches stayed under 50 ms at 10^7 (docs/performance.md): nothing to do.
    sqlite: "-- nothing but the words",
    postgres: "-- nothing: its searches inside Han text are within their time at 10^7",
    derive: "sqlite unspaced words",
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
