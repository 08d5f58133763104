import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import staticFiles from "@fastify/static";
import type { FastifyInstance } from "fastify";

/** The librarian's page as `npm run build` writes it (from src/ and dist/ alike). */
export const WEB_ROOT = fileURLToPath(new URL("../../dist/web/", import.meta.url));

// Vite names each asset after a hash of its content, so a name never changes meaning: it may
// be kept for a year. index.html names the current assets, so it is checked every time.
const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "no-cache";
// The page loads only its own scripts, styles and images, and calls only this origin.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; " +
  "form-action 'self'; frame-ancestors 'none'";

/**
 * Serves the built page at `/` and its files: a route for each file present at start-up (no
 * wildcard), so every other path still answers 404 in the envelope.
 */
export async function registerWebPage(app: FastifyInstance, root: string): Promise<void> {
  if (!existsSync(`${root}/index.html`)) {
    throw new Error(`the librarian's page is not built (no ${root}index.html): run npm run build`);
  }
  await app.register(staticFiles, {
    root,
    wildcard: false,
    index: "index.html",
    schemaHide: true,
    cacheControl: false,
    setHeaders: (reply, path) => {
      const asset = /[\\/]assets[\\/]/.test(path);
      reply.header("cache-control", asset ? IMMUTABLE : REVALIDATE);
      if (path.endsWith(".html")) {
        reply.header("content-security-policy", CONTENT_SECURITY_POLICY);
        reply.header("x-content-type-options", "nosniff");
        reply.header("referrer-policy", "no-referrer");
      }
    },
  });
}
