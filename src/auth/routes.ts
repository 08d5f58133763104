import type { FastifyInstance } from "fastify";
import { answerSchema, failures, Messages, respond } from "../envelope.js";
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

const loginSchema = {
  type: "object",
  required: ["username", "password"],
  properties: { username: { type: "string" }, password: { type: "string" } },
} as const;

export async function authRoutes(app: FastifyInstance, options: AuthRoutesOptions) {
  const { tokens, checkCredentials, limiter } = options;

  app.post<{ Body: LoginRequest }>(
    "/token",
    {
      schema: {
        summary: "Exchange the built-in username and password for a token valid 15 minutes",
        tags: ["tokens"],
        body: loginSchema,
        response: {
          200: answerSchema(
            { type: "object", required: ["token"], properties: { token: { type: "string" } } },
            Messages.tokenGenerated,
          ),
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
      // A client over its failure limit waits, even with the right password: that is what
      // stops guessing.
      const wait = await limiter.retryAfter(request.ip);
      if (wait > 0) {
        reply.header("retry-after", String(wait));
        return respond(reply, 429, Messages.tooManyRequests);
      }
      const { username, password } = request.body;
      if (!checkCredentials(username, password)) {
        await limiter.recordFailure(request.ip);
        return respond(reply, 401, Messages.invalidCredentials);
      }
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
