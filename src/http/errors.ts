// What a client sees when something goes wrong: one handler for errors thrown while
// answering, the 404 and 405 of paths and methods no route takes, and the answer to a request
// Node's own parser refused. A 5xx never shows server-side detail.
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchemaValidationError,
} from "fastify";
import { LimiterUnavailableError } from "../auth/login-limiter.js";
import {
  BookChangedError,
  SearchTooBroadError,
  StoreFullError,
  StoreUnavailableError,
} from "../store/store.js";
import { Messages, respond } from "./envelope.js";
import type { Metrics } from "./metrics.js";
import { REASON_HEADER, setReason, validationReason } from "./reasons.js";
import { watchStoreFull } from "./store-full.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The 400 message for a body this route cannot use. */
    invalidBodyMessage?: string;
  }
}

/** Seconds a client is asked to wait before trying again while the store is away or slow. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** Answers every error thrown by a route in the envelope, and 404/405 for the rest. */
export function addErrorHandlers(app: FastifyInstance, metrics: Metrics | undefined): void {
  const allowedMethods = trackRouteMethods(app);
  const refuseForSpace = watchStoreFull(app, metrics);
  const refuseForDescriptors = outOfDescriptors(app, metrics);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    forgetStreamHeaders(reply);
    if (error instanceof StoreFullError) return refuseForSpace(request, reply);
    if (isOutOfDescriptors(error)) return refuseForDescriptors(reply);
    return handleError(error, request, reply, metrics);
  });
  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethods(request.url);
    // A route that takes this method but found nothing (a missing file under a static
    // prefix) is a 404: only a method the path does not take is a 405.
    if (allowed.length === 0 || allowed.includes(request.method)) {
      return respond(reply, 404, Messages.notFound);
    }
    reply.header("allow", allowed.join(", "));
    return respond(reply, 405, Messages.methodNotAllowed);
  });
}

function handleError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  metrics: Metrics | undefined,
) {
  const invalidBody = request.routeOptions.config.invalidBodyMessage;
  if (error.validation) return refuseInvalid(request, reply, error, invalidBody);
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return respond(reply, 413, Messages.payloadTooLarge);
  }
  if (error instanceof BookChangedError) return respond(reply, 412, Messages.bookChanged);
  if (error instanceof SearchTooBroadError) return respond(reply, 400, Messages.searchTooBroad);
  if (error instanceof StoreUnavailableError) {
    request.log.warn({ reqId: request.id, err: error.cause ?? error }, "store unavailable");
    metrics?.storeError("unavailable");
    reply.header("retry-after", String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    return respond(reply, 503, Messages.serviceUnavailable);
  }
  if (error instanceof LimiterUnavailableError) {
    request.log.warn({ reqId: request.id, err: error.cause ?? error }, "login limiter unavailable");
    metrics?.limiterError();
    return respond(reply, 503, Messages.serviceUnavailable);
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    setReason(reply, "body: could not be read");
    return respond(reply, 400, invalidBody ?? Messages.badRequest);
  }
  request.log.error({ reqId: request.id, err: error }, "unexpected failure");
  metrics?.storeError("error");
  return respond(reply, 500, Messages.internalError);
}

/**
 * 400 for a request its route's schemas refuse, with the reason in its header. PUT /book/{id}
 * judges its body in the handler (the book is looked up first), and answers with this too.
 */
export function refuseInvalid(
  request: FastifyRequest,
  reply: FastifyReply,
  error: { validation?: FastifySchemaValidationError[]; validationContext?: string },
  message: string = Messages.badRequest,
): FastifyReply {
  setReason(reply, validationReason(request, error.validation ?? [], error.validationContext));
  return respond(reply, 400, message);
}

/**
 * A file whose stream failed before its first byte (it could not be opened) has set its
 * headers on the raw response already: its type and length are not the envelope's.
 */
function forgetStreamHeaders(reply: FastifyReply): void {
  if (reply.raw.headersSent) return;
  for (const name of reply.raw.getHeaderNames()) reply.raw.removeHeader(name);
}

const DESCRIPTOR_CODES = new Set(["EMFILE", "ENFILE"]);
const DESCRIPTOR_WARNING_INTERVAL_MS = 10_000;

/** No descriptor was left to open a file or a connection, here or on the way (a cause). */
function isOutOfDescriptors(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) {
    if (DESCRIPTOR_CODES.has((e as NodeJS.ErrnoException).code ?? "")) return true;
  }
  return false;
}

/**
 * Descriptors running out is a state of the process, not a failure of each request: each
 * request it refuses is answered 503 with Retry-After and counted, and one warning is logged
 * at most every ten seconds, with how many were refused since the last.
 */
function outOfDescriptors(
  app: FastifyInstance,
  metrics: Metrics | undefined,
): (reply: FastifyReply) => FastifyReply {
  let lastWarning = 0;
  let refused = 0;
  return (reply) => {
    metrics?.outOfDescriptors();
    refused += 1;
    const now = Date.now();
    if (now - lastWarning >= DESCRIPTOR_WARNING_INTERVAL_MS) {
      lastWarning = now;
      app.log.warn(
        { refused },
        "out of file descriptors (EMFILE): requests answer 503; raise ulimit -n or lower MAX_CONNECTIONS",
      );
      refused = 0;
    }
    reply.header("retry-after", "1");
    return respond(reply, 503, Messages.serviceUnavailable);
  };
}

/**
 * Records each route's methods as it is registered, and answers which methods a concrete path
 * allows, so a known path with a wrong method gets 405 and an `Allow` header.
 */
function trackRouteMethods(app: FastifyInstance): (url: string) => string[] {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook("onRoute", (route) => {
    const source = route.url
      .replace(/\/$/, "")
      .replace(/:[^/]+/g, "[^/]+")
      .replace(/\*$/, ".*");
    const pattern = new RegExp(`^${source}$`);
    let entry = routes.find((r) => r.pattern.source === pattern.source);
    if (entry === undefined) {
      entry = { pattern, methods: new Set() };
      routes.push(entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  return (url) => {
    const path = (url.split("?")[0] ?? "").replace(/\/$/, "");
    const entry = routes.find((r) => r.pattern.test(path));
    return entry ? [...entry.methods].sort() : [];
  };
}

const CLIENT_ERROR_GRACE_MS = 1000;

/** Why Node's parser refused a request, for the refusals a client can mend (reasons.ts). */
const PARSER_REASONS: Record<string, string> = {
  CONNECT: "method: CONNECT is not served here",
};

/**
 * Why the parser refused a URL: it takes only printable ASCII there, so raw UTF-8 (`?q=é` sent
 * unencoded) ends here, the parser stopped on that byte; so does a target that is no path
 * (`GET books`), where it stops after the space that ends it.
 */
function invalidUrlReason(error: Error): string {
  // Node's parser errors carry the data it was given and how far it read.
  const { rawPacket, bytesParsed } = error as { rawPacket?: Buffer; bytesParsed?: number };
  const byte = rawPacket?.[bytesParsed ?? -1];
  return byte !== undefined && (byte < 0x20 || byte > 0x7e)
    ? "URL: characters outside printable ASCII must be percent-encoded"
    : "URL: a path starting with / (or an absolute URL)";
}

/** Requests Node's HTTP parser refused: answered in the envelope, then the connection closes. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [431, Messages.headersTooLarge]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, Messages.requestTimeout]
        : [400, Messages.badRequest];
  const body = JSON.stringify({ status, message, data: null });
  const reason =
    error.code === "HPE_INVALID_URL" ? invalidUrlReason(error) : PARSER_REASONS[error.code ?? ""];
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\n` +
      (reason === undefined ? "" : `${REASON_HEADER}: ${reason}\r\n`) +
      `Connection: close\r\n\r\n${body}`,
  );
  // end() only half-closes: a client that never reads nor closes its side would hold the
  // descriptor for minutes (FIN-WAIT-2). It gets a moment to read the answer, then the socket
  // goes; destroying at once could reset the connection before the answer is read.
  const timer = setTimeout(() => socket.destroy(), CLIENT_ERROR_GRACE_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}
