// The accounts on SQLite. Reads use the store's own connection (on the event loop, like a read
// of one book: a few µs). Writes are the writer's, as the books' are (group-commit.ts: its
// thread, the primary's with WORKERS above 1, this thread's connection for a database in
// memory), so that no lock wait, commit or fsync of theirs holds the event loop, and their
// deadline is the books' (a write answered 503 wrote nothing). They commit in the groups of
// book writes, each answering for itself; they change no book, so the books kept by id stay
// kept (listing pages are read once more, as after any commit). Every request reads its
// account anew, in whichever process serves it, and a commit ends the shared read of the
// process that asked for it: a committed change is seen by the next request everywhere.
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import {
  ACCOUNT_COLUMNS,
  type Account,
  type AccountChanges,
  type AccountRow,
  type AccountStore,
  type NewAccount,
  publicAccount,
  storedAccount,
} from "../accounts.js";
import { withStoreErrors } from "./errors.js";
import type { AccountWrite } from "./group-commit.js";
import { writeStatement } from "./schema.js";

/** The accounts of the database `db` reads; `write` hands a write to the store's writer. */
export function sqliteAccounts(
  db: DatabaseSync,
  write: (write: AccountWrite) => Promise<unknown>,
): AccountStore {
  const byId = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`);
  const byName = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE name = ?`);
  const any = db.prepare("SELECT EXISTS (SELECT 1 FROM accounts) AS any");
  const all = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY id`);
  return {
    list: () => withStoreErrors(() => (all.all() as unknown as AccountRow[]).map(toPublic)),
    get: (id) =>
      withStoreErrors(() => {
        const row = byId.get(id) as AccountRow | undefined;
        return row === undefined ? undefined : storedAccount(row);
      }),
    find: (name) =>
      withStoreErrors(() => {
        const row = byName.get(name) as AccountRow | undefined;
        const anyAccount = (any.get() as { any: number }).any === 1;
        return { account: row === undefined ? undefined : storedAccount(row), anyAccount };
      }),
    create: (account) => write({ op: "create account", account }) as Promise<Account | undefined>,
    update: (id, changes) =>
      write({ op: "update account", id, changes }) as Promise<Account | undefined>,
    remove: (id) => write({ op: "remove account", id }) as Promise<boolean>,
  };
}

/**
 * The account writes of the writer's connection `db`, inside its group's transaction. Their
 * results cross back as plain JSON (the workers' socket).
 */
export function accountWrites(db: DatabaseSync) {
  const insertStmt = writeStatement(
    db,
    `INSERT INTO accounts (name, role, enabled, password_hash, tokens_valid_from)
     VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
  );
  const byIdStmt = db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`);
  const removeStmt = writeStatement(db, "DELETE FROM accounts WHERE id = ?");
  return {
    /** `undefined` when the name is taken. */
    create(account: NewAccount): Account | undefined {
      const { name, role, passwordHash, tokensValidFrom, enabled = true } = account;
      const inserted = insertStmt.run(name, role, enabled ? 1 : 0, passwordHash, tokensValidFrom);
      if (Number(inserted.changes) === 0) return undefined;
      return { id: Number(inserted.lastInsertRowid), name, role, enabled };
    },
    update(id: number, changes: AccountChanges): Account | undefined {
      const { fields, values } = updateOf(changes);
      if (fields !== "") {
        writeStatement(db, `UPDATE accounts SET ${fields} WHERE id = ?`).run(...values, id);
      }
      const row = byIdStmt.get(id) as AccountRow | undefined;
      return row === undefined ? undefined : toPublic(row);
    },
    remove: (id: number): boolean => removeStmt.run(id).changes !== 0n,
  };
}

/** What accountWrites gives: the account writes of one connection. */
export type AccountWrites = ReturnType<typeof accountWrites>;

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
