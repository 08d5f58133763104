import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";
import secureJson from "secure-json-parse";

/**
 * A body that is not JSON, not UTF-8, or carries `__proto__`: it fails every body schema, so
 * it is a 400.
 */
const UNPARSABLE_BODY = Symbol("unparsable body");

/**
 * The body is JSON whatever its Content-Type, so `curl -d` without -H works. Its bytes must be
 * UTF-8: decoding would put U+FFFD in place of a bad byte, and the book would be stored altered.
 */
export function parseEveryBodyAsJson(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(null, UNPARSABLE_BODY);
      return;
    }
    try {
      const text = bytes.toString("utf8");
      done(null, secureJson.parse(text, { protoAction: "error", constructorAction: "error" }));
    } catch {
      done(null, UNPARSABLE_BODY);
    }
  });
}
