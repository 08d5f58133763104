import type { onRequestHookHandler } from "fastify";
import { Messages, respond } from "../http/envelope.js";
import type { TokenService } from "./tokens.js";

const BEARER = /^bearer\s+/i;

/**
 * An onRequest hook: a book route runs only with a valid token, checked before the body is
 * read or the id looked at. The header holds the bare token or `Bearer <token>`.
 */
export function requireToken(tokens: TokenService): onRequestHookHandler {
  return (request, reply, done) => {
    const header = request.headers.authorization?.trim() ?? "";
    if (header === "") respond(reply, 401, Messages.tokenRequired);
    else if (!tokens.verify(header.replace(BEARER, ""))) respond(reply, 401, Messages.invalidToken);
    else done();
  };
}
