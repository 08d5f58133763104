import { type Config, type DbTarget, describeDb } from "../config.js";
import type { MigrationLog } from "./applied-migrations.js";
import type { BackupStore } from "./backup.js";
import { openSqliteBackup } from "./sqlite/backup.js";
import { migrateSqliteFile, openSqliteStore } from "./sqlite/store.js";
import type { BookStore } from "./store.js";

/**
 * Opens the store that DB_URL names and prepares its schema, telling `migrationLog` each
 * migration applied and how far a long one has come, or fails with StoreOpenError.
 */
export async function openStore(
  config: Pick<Config, "db" | "pgPoolSize"> &
    Partial<Pick<Config, "dbTimeoutMs" | "dbPreparedStatements" | "changesListenUrl">>,
  migrationLog?: MigrationLog,
): Promise<BookStore> {
  const { db } = config;
  if (db.kind === "sqlite") {
    // A file migrates first, in a thread of its own that leaves the event loop free (a large
    // catalogue's migration takes minutes); the store then finds it current.
    if (db.path !== ":memory:") await migrateSqliteFile(db.path, migrationLog);
    return openSqliteStore(db.path, undefined, config.dbTimeoutMs, migrationLog);
  }

  // The driver is loaded only for a PostgreSQL store (its memory: docs/performance.md).
  const { openPostgresStore } = await import("./postgres/store.js");
  return openPostgresStore(db.url, {
    poolSize: config.pgPoolSize,
    timeoutMs: config.dbTimeoutMs ?? 5_000,
    preparedStatements: config.dbPreparedStatements ?? true,
    description: describeDb(db),
    ...(migrationLog ? { migrationLog } : {}),
    ...(config.changesListenUrl ? { listenUrl: config.changesListenUrl } : {}),
  });
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
  return openPostgresBackup(db.url, describeDb(db), purpose);
}
