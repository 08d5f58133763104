import { hostname } from "node:os";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * One JSON line per request, in pino's own line format, written straight to the log
 * destination: pino's object path for this line cost three times as much, on the hot path
 * (docs/performance.md).
 * It holds no header and no body, and of the URL only what `loggedUrl` keeps. The client's
 * address is `request.ip`: the peer's, or with TRUST_PROXY the one the proxies forwarded
 * (which a client may have written, hence quoted as JSON).
 *
 * The lines of one turn of the event loop go to the destination in one write, at the end of
 * the turn: sonic-boom measures the byte length of its whole pending buffer on every write,
 * a cost per request that showed in GET /book/{id} (docs/performance.md). `flush` writes what is left
 * at once; call it when the server has closed.
 */
export function createAccessLog(destination: { write(lines: string): unknown }, worker?: number) {
  const bindings =
    `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}` +
    (worker === undefined ? "" : `,"worker":${worker}`);
  let pending = "";
  const flush = () => {
    if (pending === "") return;
    const lines = pending;
    pending = "";
    destination.write(lines);
  };
  return {
    log(request: FastifyRequest, reply: FastifyReply): void {
      if (pending === "") setImmediate(flush);
      pending +=
        `{"level":30,"time":${Date.now()}${bindings},"reqId":${JSON.stringify(request.id)}` +
        `,"ip":${JSON.stringify(request.ip)},"method":${JSON.stringify(request.method)},"url":${JSON.stringify(loggedUrl(request.url))}` +
        `,"statusCode":${reply.statusCode},"responseTimeMs":${Math.round(reply.elapsedTime * 100) / 100}` +
        `,"msg":"request"}\n`;
    },
    flush,
  };
}

// A JSON Web Token starts with the encoding of `{"`; its segments are base64url.
const TOKEN_SHAPED = /eyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){0,2}/g;

/**
 * The URL as the access log writes it: the path, and the names of the query parameters
 * without their values (`/books?limit&token`). A value may be a token sent by mistake, a
 * search or a name, none of which belongs in a log; anything shaped like a token that is
 * left (in the path, or as a name) is replaced.
 */
export function loggedUrl(url: string): string {
  const mark = url.indexOf("?");
  let logged = url;
  if (mark !== -1) {
    const names = url
      .slice(mark + 1)
      .split("&")
      .filter((part) => part !== "")
      .map((part) => {
        const equals = part.indexOf("=");
        return equals === -1 ? part : part.slice(0, equals);
      });
    logged = `${url.slice(0, mark)}?${names.join("&")}`;
  }
  return logged.includes("eyJ") ? logged.replace(TOKEN_SHAPED, "[redacted]") : logged;
}
