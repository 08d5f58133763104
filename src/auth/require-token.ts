import type { onRequestHookHandler } from "fastify";
import { Messages, respond } from "../http/envelope.js";
import type { AccountStore } from "../store/accounts.js";
import { accountSignedIn, type SignedIn } from "./signed-in.js";
import type { TokenService } from "./tokens.js";

// The scheme and what follows it; the scheme alone (the header is trimmed) leaves no token.
const BEARER = /^bearer(?:\s+|$)/i;

export interface TokenCheck {
  tokens: TokenService;
  accounts: AccountStore | undefined;
  /** Who the built-in pair's tokens sign in. */
  builtIn: SignedIn;
}

/**
 * An onRequest hook: a route runs only with a valid token, checked before the body is read or
 * the id looked at, and knows who it signs in. The header holds the bare token or `Bearer
 * <token>`; an empty header, or `Bearer` with nothing after it, holds no token. The built-in
 * pair's tokens (no `kid`) cost what they always did; an account's read its account anew.
 */
export function requireToken({ tokens, accounts, builtIn }: TokenCheck): onRequestHookHandler {
  // Nothing is returned: a hook that returns the reply (a thenable) would be awaited.
  return (request, reply, done) => {
    const token = request.headers.authorization?.trim().replace(BEARER, "") ?? "";
    const verified = token !== "" && tokens.verify(token);
    if (token === "") respond(reply, 401, Messages.tokenRequired);
    else if (verified === false) respond(reply, 401, Messages.invalidToken);
    else if (verified.account === undefined) {
      request.signedIn = builtIn;
      done();
    } else {
      accountSignedIn(accounts, verified).then((signedIn) => {
        if (signedIn === undefined) respond(reply, 401, Messages.invalidToken);
        else {
          request.signedIn = signedIn;
          done();
        }
      }, done);
    }
  };
}
