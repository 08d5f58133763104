import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { Messages } from "./envelope.js";

const { version } = JSON.parse(
  readFileSync(new URL("../package.json", import.meta.url), "utf8"),
) as { version: string };

/** Book routes declare this: the token goes in the Authorization header. */
export const TOKEN_SECURITY = [{ token: [] }];

const DESCRIPTION = `A catalogue of books guarded by short-lived signed tokens.

Every answer is the envelope \`{"status", "message", "data"}\`: \`status\` equals the HTTP
status, and \`data\` is null on every failure. Each answer below lists the messages it may
carry.

Get a token from \`POST /token\` and send it in the \`Authorization\` header, bare or as
\`Bearer <token>\`; it is valid for 15 minutes. In this page: *Authorize*, paste the token.

Any path may also answer 404 \`${Messages.notFound}\` (unknown path) or 405
\`${Messages.methodNotAllowed}\` with an \`Allow\` header (known path, other method).`;

/**
 * The OpenAPI 3.1 description, generated from the route schemas, at GET /openapi.json, and an
 * interactive page at GET /docs served from the package's own files. Register before routes.
 */
export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "Book Catalogue Service", version, description: DESCRIPTION },
      components: {
        securitySchemes: {
          token: {
            type: "apiKey",
            in: "header",
            name: "Authorization",
            description: "The token from POST /token, bare or as `Bearer <token>`.",
          },
        },
      },
      tags: [
        { name: "tokens", description: "Exchange the built-in credentials for a token" },
        { name: "books", description: "The catalogue; every route needs a token" },
        { name: "operations", description: "Liveness and readiness" },
      ],
    },
  });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    // No call to any other host: Swagger UI's online validator is off.
    uiConfig: { validatorUrl: null, persistAuthorization: true, tryItOutEnabled: true },
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
