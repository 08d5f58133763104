import { createHash } from "node:crypto";
import swagger from "@fastify/swagger";
import swaggerUi, { type FastifySwaggerUiOptions } from "@fastify/swagger-ui";
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from "fastify";
import { VERSION } from "../version.js";
import { Messages, respond } from "./envelope.js";
import { completeDocument, registerSchemas, UNROUTED_RESPONSES } from "./openapi.js";

/** Book routes declare this: the token goes in the Authorization header. */
export const TOKEN_SECURITY = [{ token: [] }];

const DESCRIPTION = `A catalogue of books guarded by short-lived signed tokens.

Every answer is the envelope \`{"status", "message", "data"}\`: \`status\` equals the HTTP
status, and \`data\` is null on every failure. Each answer below lists the messages it may
carry.

Get a token from \`POST /token\` and send it in the \`Authorization\` header, bare or as
\`Bearer <token>\`; it is valid for 15 minutes. In this page: *Try it out* on \`POST /token\`,
then *Authorize* and paste the token.

Any path may also answer 404 \`${Messages.notFound}\` (unknown path) or 405
\`${Messages.methodNotAllowed}\` with an \`Allow\` header (known path, other method): see
\`components.responses\`.

This document is \`/openapi.json\`. [The librarian's page](/) manages the catalogue through
this API.`;

// The project's own mark for the docs page's tab: an open book.
const FAVICON = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path fill="#2f5d8a" d="M2 6c5-2 10-2 14 1v20c-4-3-9-3-14-1zm28 0c-5-2-10-2-14 1v20c4-3 9-3 14-1z"/></svg>',
);

// Swagger UI's top bar holds a third party's logo and an address bar for any document; this
// page shows one document, so the bar goes, and the title below names the service.
const THEME_CSS = ".swagger-ui .topbar { display: none; }";

/** The document has one address: Swagger UI's own copies of it are not served. */
function onlyOneDocumentUrl(
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  if (request.routeOptions.url === "/docs/json" || request.routeOptions.url === "/docs/yaml") {
    respond(reply, 404, Messages.notFound);
    return;
  }
  // Swagger UI redirects its index.html to the page only without a query string; with one,
  // to itself, for ever.
  if (request.routeOptions.url === "/docs/static/index.html") {
    reply.redirect("/docs/");
    return;
  }
  done();
}

// Swagger UI's own top-bar logo is an SVG holding one inline <style>: that text alone is
// allowed, by its hash (Chromium reports any other inline style or script the page tries).
const SWAGGER_LOGO_STYLE = ".logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}";
const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; " +
  `style-src 'self' 'sha256-${createHash("sha256").update(SWAGGER_LOGO_STYLE).digest("base64")}'; ` +
  "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
  "form-action 'self'; frame-ancestors 'none'";

/** What the OpenAPI document says of the service as a whole; the routes add the rest. */
const DOCUMENT = {
  openapi: "3.1.0",
  info: {
    title: "Book Catalogue Service",
    version: VERSION,
    description: DESCRIPTION,
    license: { name: "MIT", identifier: "MIT" },
    contact: { name: "The Book Catalogue Service maintainers" },
  },
  // Relative: the document describes the service that serves it, wherever that is.
  servers: [{ url: "/", description: "The service serving this document" }],
  components: {
    responses: UNROUTED_RESPONSES,
    securitySchemes: {
      token: {
        type: "apiKey" as const,
        in: "header",
        name: "Authorization",
        description: "The token from POST /token, bare or as `Bearer <token>`.",
      },
    },
  },
  tags: [
    { name: "tokens", description: "Exchange the built-in credentials for a token" },
    { name: "books", description: "The catalogue; every route needs a token" },
    { name: "accounts", description: "Accounts and their roles; managed by administrators" },
    {
      name: "changes",
      description: "Every change to the catalogue, in order: to follow, resume, look back and undo",
    },
    { name: "operations", description: "Liveness and readiness" },
  ],
};

const withViewport = (html: string) =>
  html.replace(
    '<meta charset="UTF-8">',
    '$&\n<meta name="viewport" content="width=device-width, initial-scale=1">',
  );

/** Swagger UI at /docs: the package's own files, this origin only, the one document. */
const UI_OPTIONS: FastifySwaggerUiOptions = {
  routePrefix: "/docs",
  theme: {
    title: "Book Catalogue Service: API",
    css: [{ filename: "theme.css", content: THEME_CSS }],
    favicon: [
      {
        filename: "favicon.svg",
        rel: "icon",
        sizes: "any",
        type: "image/svg+xml",
        content: FAVICON,
      },
    ],
  },
  // Swagger UI's page loads its scripts and styles from files; no other site may frame it.
  staticCSP: DOCS_CONTENT_SECURITY_POLICY,
  uiHooks: {
    onRequest: (request, reply, done) => {
      reply.header("referrer-policy", "no-referrer");
      onlyOneDocumentUrl(request, reply, done);
    },
  },
  uiConfig: {
    // No call to any other host: Swagger UI's online validator is off.
    validatorUrl: null,
    // The token pasted under Authorize stays in the page's memory, never in localStorage:
    // a reload forgets it.
    persistAuthorization: false,
    tryItOutEnabled: true,
    // The page reads the one document; its loader is the top bar's, hidden above.
    urls: [{ url: "/openapi.json", name: "Book Catalogue Service" }],
  },
};

/**
 * The OpenAPI 3.1 description, generated from the route schemas, at GET /openapi.json, and an
 * interactive page at GET /docs served from the package's own files. Register before routes.
 */
export async function registerDocs(
  app: FastifyInstance,
  options: { credentialsExample: { username: string; password: string } },
): Promise<void> {
  registerSchemas(app, options.credentialsExample);
  await app.register(swagger, {
    openapi: DOCUMENT,
    // HEAD is served wherever GET is: described too (completeDocument words it).
    exposeHeadRoutes: true,
    transformObject: (document) =>
      "openapiObject" in document
        ? completeDocument(document.openapiObject)
        : document.swaggerObject,
    // Shared schemas keep their names in components.schemas: Book, not def-0.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === "string" ? json.$id : `def-${i}`,
    },
  });
  // Swagger UI's page names no viewport: a phone lays it out 980 px wide, its text a few
  // pixels high. Its index gets one, in a scope of its own: the hook runs on no other route.
  await app.register(async (docs) => {
    docs.addHook("onSend", (_request, reply, payload, done) => {
      const html = String(reply.getHeader("content-type")).startsWith("text/html");
      done(null, html && typeof payload === "string" ? withViewport(payload) : payload);
    });
    await docs.register(swaggerUi, UI_OPTIONS);
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
