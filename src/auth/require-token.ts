import type { onRequestHookHandler } from "fastify";
import { Messages, respond } from "../http/envelope.js";
import type { TokenService } from "./tokens.js";

// The scheme and what follows it; the scheme alone (the header is trimmed) leaves no token.
const BEARER = /^bearer(?:\s+|$)/i;

/**
 * An onRequest hook: a book route runs only with a valid token, checked before the body is
 * read or the id looked at. The header holds the bare token or `Bearer <token>`; an empty
 * header, or `Bearer` with nothing after it, holds no token.
 */
export function requireToken(tokens: TokenService): onRequestHookHandler {
  return (request, reply, done) => {
    const token = request.headers.authorization?.trim().replace(BEARER, "") ?? "";
    if (token === "") respond(reply, 401, Messages.tokenRequired);
    else if (!tokens.verify(token)) respond(reply, 401, Messages.invalidToken);
    else done();
  };
}
