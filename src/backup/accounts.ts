// The accounts in a backup (format 2 on): one line each after the header, before the books,
// with the password's hash, so a restored account signs in with its password. The file is as
// private as the database it came from (docs/security.md).
import { NAME_MAX } from "../accounts/schemas.js";
import { tokensEndNow } from "../auth/signed-in.js";
import { checkText } from "../rules/book.js";
import { ROLES, type StoredAccount } from "../store/accounts.js";
import { BackupFileError } from "./format.js";

/** Longer than any scrypt hash this build makes or reads (auth/passwords.ts). */
const HASH_MAX = 512;

/** An account's line: its six fields in a fixed order. */
export const encodeAccount = (account: StoredAccount): string =>
  `${JSON.stringify({
    id: account.id,
    name: account.name,
    role: account.role,
    enabled: account.enabled,
    passwordHash: account.passwordHash,
    tokensValidFrom: account.tokensValidFrom,
  })}\n`;

/**
 * Checks each account line in turn (`line` is its number in the file): an account, its id
 * above the last one, its name no other's.
 */
export function accountChecker() {
  let lastId = 0;
  const names = new Set<string>();
  return (fields: Partial<Record<keyof StoredAccount, unknown>>, line: number): StoredAccount => {
    const { id, name, role, enabled, passwordHash, tokensValidFrom } = fields ?? {};
    const account =
      Number.isSafeInteger(id) &&
      checkText(name, NAME_MAX) === undefined &&
      (ROLES as readonly unknown[]).includes(role) &&
      typeof enabled === "boolean" &&
      typeof passwordHash === "string" &&
      passwordHash.startsWith("$scrypt$") &&
      passwordHash.length <= HASH_MAX &&
      Number.isSafeInteger(tokensValidFrom) &&
      (tokensValidFrom as number) >= 0;
    if (!account) throw new BackupFileError(`line ${line} is not an account: the file is damaged`);
    if ((id as number) <= lastId) {
      throw new BackupFileError(`line ${line} has an account id out of order: the file is damaged`);
    }
    if (names.has(name as string)) {
      throw new BackupFileError(`line ${line} names an account twice: the file is damaged`);
    }
    lastId = id as number;
    names.add(name as string);
    return { id, name, role, enabled, passwordHash, tokensValidFrom } as StoredAccount;
  };
}

/**
 * The accounts as a restore writes them: every token issued before the restore ends. A token
 * issued since the backup was taken may be of a password or an account the backup does not
 * hold (changed, disabled or removed since), and cannot be told from one that is not.
 */
export function withTokensEnded(accounts: readonly StoredAccount[]): StoredAccount[] {
  const now = tokensEndNow();
  return accounts.map((account) => ({
    ...account,
    tokensValidFrom: Math.max(account.tokensValidFrom, now),
  }));
}
