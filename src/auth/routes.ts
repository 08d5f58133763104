import type { FastifyInstance } from "fastify";
import { Messages, respond } from "../http/envelope.js";
import { answerSchema, failures, schemaRef } from "../http/openapi.js";
import {
  countAttempt,
  countSuccess,
  createLogin,
  type LoginOptions,
  untilTokensValid,
} from "./login.js";
import type { LoginLimiter } from "./login-limiter.js";
import type { TokenService } from "./tokens.js";

export interface AuthRoutesOptions extends LoginOptions {
  tokens: TokenService;
  limiter: LoginLimiter;
}

interface LoginRequest {
  username: string;
  password: string;
}

export async function authRoutes(app: FastifyInstance, options: AuthRoutesOptions) {
  const { tokens, limiter, isBuiltInName } = options;
  const login = createLogin(options);

  app.post<{ Body: LoginRequest }>(
    "/token",
    {
      schema: {
        operationId: "createToken",
        summary:
          "Exchange the built-in username and password, or an account's, for a token valid 15 minutes",
        description:
          "Send the token in the `Authorization` header of every book route, bare or as `Bearer <token>`. An account's token names it in the header's `kid`; the built-in pair's has none. Failed attempts are limited per client, and per account name: past the limit, 429 with `Retry-After`, even with the right password.",
        tags: ["tokens"],
        security: [],
        body: schemaRef("Credentials"),
        response: {
          200: answerSchema("TokenEnvelope", [Messages.tokenGenerated]),
          ...failures({
            400: [Messages.invalidRequestPayload, Messages.badRequest],
            401: [Messages.invalidCredentials],
            413: [Messages.payloadTooLarge],
            429: [Messages.tooManyRequests],
            500: [Messages.tokenNotGenerated, Messages.internalError],
            503: [Messages.serviceUnavailable],
          }),
        },
      },
      config: { invalidBodyMessage: Messages.invalidRequestPayload },
    },
    async (request, reply) => {
      const { username, password } = request.body;
      // The built-in pair's name is counted per client only, as the contract's limit is.
      const name = isBuiltInName(username) ? undefined : username;
      // Every attempt is counted before the credentials are looked at, so a client over its
      // limit waits even with the right password, and parallel guesses cannot outrun the count.
      const wait = await countAttempt(limiter, request.ip, name);
      if (wait > 0) {
        reply.header("retry-after", String(wait));
        return respond(reply, 429, Messages.tooManyRequests);
      }
      const signedIn = await login(username, password);
      if (signedIn === undefined) return respond(reply, 401, Messages.invalidCredentials);
      await countSuccess(limiter, request.ip, name);
      if (signedIn !== null) await untilTokensValid(signedIn);
      let token: string;
      try {
        token = tokens.issue(signedIn?.id);
      } catch (error) {
        request.log.error({ reqId: request.id, err: error }, "token signing failed");
        return respond(reply, 500, Messages.tokenNotGenerated);
      }
      return respond(reply, 200, Messages.tokenGenerated, { token });
    },
  );
}
