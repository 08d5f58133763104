// Who a name and password sign in: the built-in pair, an account, or no one. With no account
// in the store a login is what it always was (the built-in pair, compared in constant time,
// no hash). Once accounts exist, every login costs one scrypt hash, the built-in pair's and an
// unknown name's too (against a made-up hash), so its time tells nothing of which names exist.
// The pair's login never reads the store on its way: it works while the store is away.
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
  /** Whether the store held accounts when last asked: whether the pair's login pays a hash. */
  let accountsSeen = false;
  let lastAsked = 0;
  const noAccount = { account: undefined, anyAccount: false };
  const find = async (name: string) => {
    const found = accounts ? await accounts.find(name) : noAccount;
    accountsSeen = found.anyAccount;
    return found;
  };
  return async (name: string, password: string): Promise<LoginResult> => {
    const builtInOk = checkCredentials(name, password);
    if (isBuiltInName(name)) {
      // The built-in pair always wins for its own name, and never waits on the store: its
      // login answers as the contract's does while the store is away. Once accounts have been
      // seen it costs a hash as theirs does; the store is asked again in the background, at
      // most once a second (each ask is two statements, a third of a login's CPU).
      if (Date.now() - lastAsked >= 1_000) {
        lastAsked = Date.now();
        find(name).catch(() => {});
      }
      if (accountsSeen) await passwords.verify(password);
      return builtInOk ? null : undefined;
    }
    const { account, anyAccount } = await find(name);
    if (!anyAccount) return undefined;
    const passwordOk = await passwords.verify(password, account?.passwordHash);
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
 * Until the clock the token is stamped by says so: a timer may wake before it does.
 */
export async function untilTokensValid(account: StoredAccount): Promise<void> {
  const validFrom = account.tokensValidFrom * 1000;
  for (let wait = validFrom - Date.now(); wait > 0; wait = validFrom - Date.now()) {
    await sleep(wait);
  }
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
