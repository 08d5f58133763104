// Who a name and password sign in: the built-in pair, an account, or no one. With no account
// in the store a login is what it always was (the built-in pair, compared in constant time,
// no hash). Once accounts exist, every login costs one scrypt hash, the built-in pair's and an
// unknown name's too (against a made-up hash), so its time tells nothing of which names exist.
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { AccountStore, StoredAccount } from "../store/accounts.js";
import type { CredentialCheck } from "./credentials.js";
import type { LoginLimiter } from "./login-limiter.js";
import type { Passwords } from "./passwords.js";

/** null: the built-in pair; an account; undefined: no one (401 `Invalid credentials`). */
export type LoginResult = StoredAccount | null | undefined;

export interface LoginOptions {
  checkCredentials: CredentialCheck;
  /** Whether a name is the built-in pair's, in constant time. */
  isBuiltInName: (name: string) => boolean;
  accounts: AccountStore | undefined;
  passwords: Passwords;
}

export function createLogin(options: LoginOptions) {
  const { checkCredentials, isBuiltInName, accounts, passwords } = options;
  return async (name: string, password: string): Promise<LoginResult> => {
    const builtInOk = checkCredentials(name, password);
    // The built-in pair always wins for its own name.
    const builtIn = isBuiltInName(name);
    const { account: found, anyAccount } = accounts
      ? await accounts.find(name)
      : { account: undefined, anyAccount: false };
    if (!anyAccount) return builtInOk ? null : undefined;
    const account = builtIn ? undefined : found;
    const passwordOk = await passwords.verify(password, account?.passwordHash);
    if (builtIn) return builtInOk ? null : undefined;
    if (account === undefined || !passwordOk || !account.enabled) return undefined;
    // Read again after the hash: a change of password, or a disable, made meanwhile wins.
    const now = await accounts?.get(account.id);
    if (now?.enabled !== true || now.passwordHash !== account.passwordHash) return undefined;
    return now;
  };
}

/**
 * A token issued before its account's `tokensValidFrom` would be refused: a login in the same
 * second as its account's change waits for the next second (under one) before it is issued.
 */
export async function untilTokensValid(account: StoredAccount): Promise<void> {
  const wait = account.tokensValidFrom * 1000 - Date.now();
  if (wait > 0) await sleep(wait);
}

// Failed logins are counted per client, and per name except the built-in pair's, whose limit
// stays the contract's (per client only). A name is counted under a digest of it, so keys stay
// short whatever the name sent.
const nameKey = (name: string) =>
  `name:${createHash("sha256").update(name, "utf8").digest("base64url")}`;

/** Counts one attempt by the client and, unless it is the built-in pair's, by the name. */
export async function countAttempt(
  limiter: LoginLimiter,
  client: string,
  name: string | undefined,
): Promise<number> {
  const wait = await limiter.attempt(client);
  if (wait > 0 || name === undefined) return wait;
  return limiter.attempt(nameKey(name));
}

/** The attempts `countAttempt` counted succeeded. */
export async function countSuccess(
  limiter: LoginLimiter,
  client: string,
  name: string | undefined,
): Promise<void> {
  await limiter.succeeded(client);
  if (name !== undefined) await limiter.succeeded(nameKey(name));
}
