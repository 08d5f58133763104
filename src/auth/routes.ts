import type { FastifyInstance } from "fastify";
import { envelopeSchema, errorEnvelopeSchema, Messages, respond } from "../envelope.js";
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
        body: loginSchema,
        response: {
          200: envelopeSchema({
            type: "object",
            required: ["token"],
            properties: { token: { type: "string" } },
          }),
          "4xx": errorEnvelopeSchema,
          "5xx": errorEnvelopeSchema,
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
