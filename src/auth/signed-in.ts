// Who a request is signed in as, and what their role lets them do. The built-in pair is an
// administrator; an account's role is read from the store on each of its requests, so a
// change of role, a disable or a new password holds from the next request, in every process.
import type { FastifyRequest, onRequestHookHandler } from "fastify";
import { Messages, respond } from "../http/envelope.js";
import type { AccountStore, Role, StoredAccount } from "../store/accounts.js";
import type { ChangedBy } from "../store/changes.js";
import { TOKEN_LIFETIME_SECONDS, type VerifiedToken } from "./tokens.js";

export interface SignedIn {
  /** The account's id; null for the built-in pair. */
  account: number | null;
  name: string;
  role: Role;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by requireToken before any route that needs a token runs. */
    signedIn: SignedIn;
  }
}

export const builtInPair = (name: string): SignedIn => ({ account: null, name, role: "admin" });

/** Who a request signs in, as the change log names them. */
export const changedBy = ({ signedIn }: FastifyRequest): ChangedBy => ({
  name: signedIn.name,
  account: signedIn.account,
});

const RANK: Record<Role, number> = { reader: 0, librarian: 1, admin: 2 };

/** A route's onRequest hook, after the token's: 403 `Forbidden` below `role`, nothing done. */
export function allow(role: Role): onRequestHookHandler {
  return (request, reply, done) => {
    if (RANK[request.signedIn.role] >= RANK[role]) done();
    else respond(reply, 403, Messages.forbidden);
  };
}

/** Unix seconds: when a token issued now was issued (tokens have no iat: exp − 900). */
export const issuedAt = (token: VerifiedToken) => token.expiresAt / 1000 - TOKEN_LIFETIME_SECONDS;

/**
 * The account a token with a `kid` signs in, when it names an enabled account and was issued
 * no earlier than the second its tokens became valid; else undefined (401 `Invalid token`).
 */
export async function accountSignedIn(
  accounts: AccountStore | undefined,
  token: VerifiedToken,
): Promise<SignedIn | undefined> {
  const account = await accounts?.get(token.account as number);
  if (account === undefined || !signsIn(token, account)) return undefined;
  return { account: account.id, name: account.name, role: account.role };
}

/** Whether `token` still signs in `account` (as read): enabled, and issued since it may be. */
export const signsIn = (token: VerifiedToken, account: StoredAccount | undefined) =>
  account?.enabled === true && issuedAt(token) >= account.tokensValidFrom;

/**
 * What `tokensValidFrom` becomes when an account's tokens must end now: the next second. A
 * token carries its issue time in whole seconds, so one issued earlier in this second cannot
 * be told from one issued later: both are refused, and a login waits for the next second.
 */
export const tokensEndNow = () => Math.floor(Date.now() / 1000) + 1;
