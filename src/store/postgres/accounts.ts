// The accounts on PostgreSQL: one statement each, through the store's pool. Every request reads
// its account anew, so a change committed by any instance is seen by the next request.
import sql, { join, raw } from "sql-template-tag";
import {
  ACCOUNT_COLUMNS,
  type AccountChanges,
  type AccountRow,
  type AccountStore,
  publicAccount,
  storedAccount,
} from "../accounts.js";
import { withStoreErrors } from "./errors.js";
import type { Db } from "./pool.js";

const COLUMNS = raw(ACCOUNT_COLUMNS);

export function postgresAccounts(db: Db): AccountStore {
  return {
    list: () =>
      withStoreErrors(async () => {
        const rows = await db.query<AccountRow>(sql`SELECT ${COLUMNS} FROM accounts ORDER BY id`);
        return rows.map((row) => publicAccount(storedAccount(row)));
      }),
    get: (id) =>
      withStoreErrors(async () => {
        const [row] = await db.query<AccountRow>(
          sql`SELECT ${COLUMNS} FROM accounts WHERE id = ${id}`,
        );
        return row === undefined ? undefined : storedAccount(row);
      }),
    find: (name) =>
      withStoreErrors(async () => {
        // One round trip: the account of that name, and whether there is any. A name with a
        // NUL, which PostgreSQL's text cannot hold (it refuses the statement), is no account's.
        const held = name.includes("\u0000") ? null : name;
        const [found] = await db.query<{ account: AccountRow | null; any: boolean }>(sql`
          SELECT (SELECT row_to_json(a) FROM (SELECT ${COLUMNS} FROM accounts WHERE name = ${held}) a)
            AS account, EXISTS (SELECT 1 FROM accounts) AS any`);
        const row = found?.account ?? undefined;
        return { account: row && storedAccount(row), anyAccount: found?.any === true };
      }),
    create: (account) =>
      withStoreErrors(async () => {
        const [row] = await db.query<AccountRow>(sql`
          INSERT INTO accounts (name, role, enabled, password_hash, tokens_valid_from)
          VALUES (${account.name}, ${account.role}, ${account.enabled ?? true},
            ${account.passwordHash}, ${account.tokensValidFrom})
          ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`);
        return row === undefined ? undefined : publicAccount(storedAccount(row));
      }),
    update: (id, changes) =>
      withStoreErrors(async () => {
        const sets = setsOf(changes);
        const [row] = await db.query<AccountRow>(
          sets.length === 0
            ? sql`SELECT ${COLUMNS} FROM accounts WHERE id = ${id}`
            : sql`UPDATE accounts SET ${join(sets)} WHERE id = ${id} RETURNING ${COLUMNS}`,
        );
        return row === undefined ? undefined : publicAccount(storedAccount(row));
      }),
    remove: (id) =>
      withStoreErrors(async () => {
        const rows = await db.query(sql`DELETE FROM accounts WHERE id = ${id} RETURNING id`);
        return rows.length > 0;
      }),
  };
}

function setsOf(changes: AccountChanges) {
  const sets = [];
  if (changes.role !== undefined) sets.push(sql`role = ${changes.role}`);
  if (changes.enabled !== undefined) sets.push(sql`enabled = ${changes.enabled}`);
  if (changes.passwordHash !== undefined) sets.push(sql`password_hash = ${changes.passwordHash}`);
  if (changes.tokensValidFrom !== undefined) {
    sets.push(sql`tokens_valid_from = ${changes.tokensValidFrom}`);
  }
  return sets;
}
