// The accounts on SQLite. Reads use the store's own connection (on the event loop, like a read
// of one book: a few µs). Writes do not go through the books' writer (writer.ts, or the
// primary's with WORKERS above 1): they are an administrator's rare action, so each is one
// short IMMEDIATE transaction on a connection of its own. That is correct because SQLite's one
// write lock, held by the file across connections, threads and processes, serialises it with
// the writer's group commits (each waits in busy_timeout for the other); nothing the writer or
// the kept reads hold depends on accounts (a write moves PRAGMA data_version, so listing pages
// are read once more, and not books_change_count, so books read by id stay kept); and every
// request reads its account anew, in whichever process serves it, so a committed change is
// seen by the next request everywhere. The cost is the commit's fsync, on the event loop.
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import {
  ACCOUNT_COLUMNS,
  type Account,
  type AccountChanges,
  type AccountRow,
  type AccountStore,
  publicAccount,
  storedAccount,
} from "../accounts.js";
import { withStoreErrors } from "./errors.js";
import { connectExisting, transaction, writeStatement } from "./schema.js";

/** How long an account write waits for the writer's lock, holding the event loop, at most. */
const ACCOUNT_LOCK_WAIT_MS = 1_000;

/**
 * The accounts of the database `db` reads. Writes go on `db` itself in memory (`beforeWrite`
 * ending its shared read first), else on a connection of their own.
 */
export function sqliteAccounts(
  db: DatabaseSync,
  path: string,
  beforeWrite: () => void,
): AccountStore & { close(): void } {
  const writer = writeConnection(db, path, beforeWrite);
  const byId = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`);
  const byName = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE name = ?`);
  const any = db.prepare("SELECT EXISTS (SELECT 1 FROM accounts) AS any");
  const all = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY id`);
  const read = (id: number) => {
    const row = byId.get(id) as AccountRow | undefined;
    return row === undefined ? undefined : storedAccount(row);
  };
  const write = <T>(body: (wdb: DatabaseSync) => T) =>
    withStoreErrors(() => {
      const wdb = writer.get();
      return transaction(wdb, () => body(wdb));
    });

  return {
    list: () => withStoreErrors(() => (all.all() as unknown as AccountRow[]).map(toPublic)),
    get: (id) => withStoreErrors(() => read(id)),
    find: (name) =>
      withStoreErrors(() => {
        const row = byName.get(name) as AccountRow | undefined;
        const anyAccount = (any.get() as { any: number }).any === 1;
        return { account: row === undefined ? undefined : storedAccount(row), anyAccount };
      }),
    create: (account) =>
      write((wdb) => {
        const inserted = writeStatement(
          wdb,
          `INSERT INTO accounts (name, role, password_hash, tokens_valid_from) VALUES (?, ?, ?, ?)
           ON CONFLICT (name) DO NOTHING`,
        ).run(account.name, account.role, account.passwordHash, account.tokensValidFrom);
        if (Number(inserted.changes) === 0) return undefined;
        const id = Number(inserted.lastInsertRowid);
        return { id, name: account.name, role: account.role, enabled: true } satisfies Account;
      }),
    update: (id, changes) =>
      write((wdb) => {
        const { fields, values } = updateOf(changes);
        if (fields !== "") {
          writeStatement(wdb, `UPDATE accounts SET ${fields} WHERE id = ?`).run(...values, id);
        }
        const row = wdb.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`).get(id);
        return row === undefined ? undefined : toPublic(row as unknown as AccountRow);
      }),
    remove: (id) =>
      write(
        (wdb) => writeStatement(wdb, "DELETE FROM accounts WHERE id = ?").run(id).changes !== 0n,
      ),
    close: writer.close,
  };
}

/** The connection account writes use: `db` itself in memory, else one of its own, made once. */
function writeConnection(db: DatabaseSync, path: string, beforeWrite: () => void) {
  let own: DatabaseSync | undefined;
  return {
    get(): DatabaseSync {
      if (path === ":memory:") {
        beforeWrite();
        return db;
      }
      if (own === undefined) {
        own = connectExisting(path);
        own.exec(`PRAGMA busy_timeout = ${ACCOUNT_LOCK_WAIT_MS}`);
      }
      return own;
    },
    close(): void {
      if (own?.isOpen) own.close();
    },
  };
}

const toPublic = (row: AccountRow) => publicAccount(storedAccount(row));

const COLUMN_OF = {
  role: "role",
  enabled: "enabled",
  passwordHash: "password_hash",
  tokensValidFrom: "tokens_valid_from",
} as const;

/** The columns an update sets, from the changes present. */
function updateOf(changes: AccountChanges): { fields: string; values: SQLInputValue[] } {
  const sets: string[] = [];
  const values: SQLInputValue[] = [];
  for (const [key, column] of Object.entries(COLUMN_OF)) {
    const value = changes[key as keyof AccountChanges];
    if (value === undefined) continue;
    sets.push(`${column} = ?`);
    values.push(typeof value === "boolean" ? Number(value) : value);
  }
  return { fields: sets.join(", "), values };
}
