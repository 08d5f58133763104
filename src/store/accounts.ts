// The accounts kept beside the books (an extension: with none, the service is the contract's).
// Each store implements AccountStore next to its BookStore; the routes never see SQL.

export const ROLES = ["reader", "librarian", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** An account as answered to an administrator: never its password's hash. */
export interface Account {
  id: number;
  name: string;
  role: Role;
  enabled: boolean;
}

/** An account as kept: with its password's hash and when its tokens start being valid. */
export interface StoredAccount extends Account {
  /** An encoded scrypt hash (auth/passwords.ts): its parameters and salt travel with it. */
  passwordHash: string;
  /** Unix seconds: a token issued before this second is refused (auth/account-tokens.ts). */
  tokensValidFrom: number;
}

/** A new account: enabled unless `enabled` is false. */
export type NewAccount = Omit<StoredAccount, "id" | "enabled"> & { enabled?: boolean };
export type AccountChanges = Partial<
  Pick<StoredAccount, "role" | "enabled" | "passwordHash" | "tokensValidFrom">
>;

/** What a login needs: the account of that name, and whether any account exists at all. */
export interface AccountLookup {
  account: StoredAccount | undefined;
  anyAccount: boolean;
}

/** What the routes need of the accounts. Absence is `undefined`/`false`, never an exception. */
export interface AccountStore {
  /** Every account, by id. */
  list(): Promise<Account[]>;
  get(id: number): Promise<StoredAccount | undefined>;
  find(name: string): Promise<AccountLookup>;
  /** `undefined` when the name is taken. */
  create(account: NewAccount): Promise<Account | undefined>;
  /** Sets the fields present; `undefined` when there is no such account. */
  update(id: number, changes: AccountChanges): Promise<Account | undefined>;
  /** True when an account was removed. */
  remove(id: number): Promise<boolean>;
}

/** The columns of an account as both stores read them. */
export interface AccountRow {
  id: number;
  name: string;
  role: string;
  enabled: number | boolean;
  password_hash: string;
  tokens_valid_from: number;
}

export const ACCOUNT_COLUMNS = "id, name, role, enabled, password_hash, tokens_valid_from";

export function storedAccount(row: AccountRow): StoredAccount {
  return {
    id: row.id,
    name: row.name,
    role: row.role as Role,
    enabled: Boolean(row.enabled),
    passwordHash: row.password_hash,
    tokensValidFrom: row.tokens_valid_from,
  };
}

/** The account without what only the store and the login may see. */
export function publicAccount({ id, name, role, enabled }: Account): Account {
  return { id, name, role, enabled };
}
