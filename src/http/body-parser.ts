import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";
import secureJson from "secure-json-parse";

/**
 * Bodies that are not JSON, not UTF-8, or carry `__proto__`: each fails every body schema, so
 * it is a 400, and its description is the reason given with it (reasons.ts).
 */
const UNPARSABLE = {
  empty: Symbol("body: empty; send a JSON object"),
  notUtf8: Symbol("body: not UTF-8"),
  notJson: Symbol("body: not valid JSON"),
  prototype: Symbol("body: __proto__ and constructor.prototype keys are refused"),
} as const;
const PROBLEMS: ReadonlySet<unknown> = new Set(Object.values(UNPARSABLE));

/** Why the body could not be read as JSON, or undefined when it was. */
export function bodyProblem(body: unknown): string | undefined {
  return PROBLEMS.has(body) ? (body as symbol).description : undefined;
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** A media type as Fastify checks one: `type/subtype`, whatever parameters follow. */
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}[ \\t]*(?:;.*)?$`);
const JSON_TYPE = "application/json";

/**
 * The body is JSON whatever its Content-Type, so `curl -d` without -H works. Its bytes must be
 * UTF-8: decoding would put U+FFFD in place of a bad byte, and the book would be stored altered.
 */
export function parseEveryBodyAsJson(app: FastifyInstance): void {
  // Fastify answers a Content-Type it cannot read as a media type (`json`, `a/b/c`) with 415
  // before any parser runs, and before the route could say 404; since the type decides nothing
  // here, such a header is put out of its way.
  app.addHook("onRequest", (request, _reply, done) => {
    const type = request.headers["content-type"];
    if (type !== undefined && !MEDIA_TYPE.test(type)) request.headers["content-type"] = JSON_TYPE;
    done();
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) {
      done(null, UNPARSABLE.empty);
      return;
    }
    if (!isUtf8(bytes)) {
      done(null, UNPARSABLE.notUtf8);
      return;
    }
    try {
      const text = bytes.toString("utf8");
      done(null, secureJson.parse(text, { protoAction: "error", constructorAction: "error" }));
    } catch (error) {
      // secure-json-parse refuses a forbidden key with this SyntaxError; JSON.parse's own
      // SyntaxErrors say where the text stopped being JSON.
      const forbidden = /forbidden prototype property/.test((error as Error).message);
      done(null, forbidden ? UNPARSABLE.prototype : UNPARSABLE.notJson);
    }
  });
}
