import type { FastifyInstance } from "fastify";
import { Messages, respond } from "../http/envelope.js";
import { answerSchema, failures, schemaRef } from "../http/openapi.js";
import type { CredentialCheck } from "./credentials.js";
import type { LoginLimiter } from "./login-limiter.js";
import type { TokenService } from "./tokens.js";

export interface AuthRoutesOptions {
  tokens: TokenService;
  checkCredentials: CredentialCheck;
  limiter: LoginLimiter;
}

interface LoginRequest {
  username: string;
  password: string;
}

export async function authRoutes(app: FastifyInstance, options: AuthRoutesOptions) {
  const { tokens, checkCredentials, limiter } = options;

  app.post<{ Body: LoginRequest }>(
    "/token",
    {
      schema: {
        operationId: "createToken",
        summary: "Exchange the built-in username and password for a token valid 15 minutes",
        description:
          "Send the token in the `Authorization` header of every book route, bare or as `Bearer <token>`. Failed attempts are limited per client: past the limit, 429 with `Retry-After`, even with the right password.",
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
      // Every attempt is counted before the credentials are looked at, so a client over its
      // limit waits even with the right password, and parallel guesses cannot outrun the count.
      const wait = await limiter.attempt(request.ip);
      if (wait > 0) {
        reply.header("retry-after", String(wait));
        return respond(reply, 429, Messages.tooManyRequests);
      }
      const { username, password } = request.body;
      if (!checkCredentials(username, password)) {
        return respond(reply, 401, Messages.invalidCredentials);
      }
      await limiter.succeeded(request.ip);
      let token: string;
      try {
        token = tokens.issue();
      } catch (error) {
        request.log.error({ reqId: request.id, err: error }, "token signing failed");
        return respond(reply, 500, Messages.tokenNotGenerated);
      }
      return respond(reply, 200, Messages.tokenGenerated, { token });
    },
  );
}
