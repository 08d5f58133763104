import { type Config, type DbTarget, describeDb } from "../config.js";
import type { BackupStore } from "./backup.js";
import { withDeadline } from "./deadline.js";
import { openSqliteBackup } from "./sqlite/backup.js";
import { openSqliteStore } from "./sqlite/store.js";
import { type BookStore, StoreOpenError } from "./store.js";

/** How long start-up waits for the store before giving up. */
export const STORE_OPEN_TIMEOUT_SECONDS = 10;

/** Opens the store that DB_URL names and prepares its schema, or fails with StoreOpenError. */
export async function openStore(
  config: Pick<Config, "db" | "pgPoolSize"> &
    Partial<Pick<Config, "dbTimeoutMs" | "dbPreparedStatements">>,
): Promise<BookStore> {
  const { db } = config;
  if (db.kind === "sqlite") return openSqliteStore(db.path);

  const description = describeDb(db);
  // The driver is loaded only for a PostgreSQL store (its memory: docs/performance.md).
  const { openPostgresStore } = await import("./postgres/store.js");
  return withinOpenDeadline(
    openPostgresStore(db.url, {
      poolSize: config.pgPoolSize,
      timeoutMs: config.dbTimeoutMs ?? 5_000,
      preparedStatements: config.dbPreparedStatements ?? true,
      description,
    }),
    description,
  );
}

/**
 * The store `opening` gives, or StoreOpenError once STORE_OPEN_TIMEOUT_SECONDS have passed:
 * a server that accepts connections and never answers would hold start-up for ever.
 */
async function withinOpenDeadline<T extends { close(): Promise<void> }>(
  opening: Promise<T>,
  description: string,
): Promise<T> {
  let timedOut = false;
  try {
    return await withDeadline(opening, STORE_OPEN_TIMEOUT_SECONDS * 1000, () => {
      timedOut = true;
      return new StoreOpenError(
        `cannot reach PostgreSQL at ${description} within ${STORE_OPEN_TIMEOUT_SECONDS} s`,
      );
    });
  } finally {
    // A store that opens after the deadline is closed, not leaked.
    if (timedOut)
      opening.then(
        (store) => store.close(),
        () => {},
      );
  }
}

/**
 * Opens the catalogue DB_URL names for a backup (`read`: it must be there, and is not
 * changed) or a restore (created and migrated when absent), or fails with StoreOpenError.
 */
export async function openBackupStore(
  db: DbTarget,
  purpose: "read" | "restore",
): Promise<BackupStore> {
  if (db.kind === "sqlite") return openSqliteBackup(db.path, purpose);
  const { openPostgresBackup } = await import("./postgres/backup.js");
  const description = describeDb(db);
  return withinOpenDeadline(openPostgresBackup(db.url, description, purpose), description);
}
