import type { FastifyInstance } from "fastify";
import secureJson from "secure-json-parse";

/** A body that is not JSON, or carries `__proto__`: it fails every body schema, so it is a 400. */
const UNPARSABLE_BODY = Symbol("unparsable body");

/** The body is JSON whatever its Content-Type, so `curl -d` without -H works. */
export function parseEveryBodyAsJson(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(
        null,
        secureJson.parse(body as string, { protoAction: "error", constructorAction: "error" }),
      );
    } catch {
      done(null, UNPARSABLE_BODY);
    }
  });
}
