import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import { hostname } from "node:os";
import type { Duplex, Writable } from "node:stream";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import pino from "pino";
import secureJson from "secure-json-parse";
import { createCredentialCheck } from "../auth/credentials.js";
import { createMemoryLoginLimiter, type LoginLimiter } from "../auth/login-limiter.js";
import { authRoutes } from "../auth/routes.js";
import { createTokenService, type TokenService } from "../auth/tokens.js";
import { bookRoutes } from "../books/routes.js";
import type { Config } from "../config.js";
import { type BookStore, SearchTooBroadError, StoreUnavailableError } from "../store/store.js";
import { createAccessLog } from "./access-log.js";
import { registerDocs } from "./docs.js";
import { Messages, respond } from "./envelope.js";
import type { Metrics } from "./metrics.js";
import { answerSchema, failures } from "./openapi.js";
import { registerWebPage } from "./web-page.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The 400 message for a body this route cannot use. */
    invalidBodyMessage?: string;
  }
}

export interface AppDependencies {
  config: Config;
  store: BookStore;
  /** Replaces the token service built from the config (tests use it to make signing fail). */
  tokens?: TokenService;
  limiter?: LoginLimiter;
  /** Where log lines go; standard output when absent. */
  logStream?: Writable;
  /** Counts requests and store errors when given. */
  metrics?: Metrics;
  /** A folder holding the built librarian's page, served at `/`; no page when absent. */
  webRoot?: string;
  /** This worker's number, with WORKERS above 1: named in every log line and request id. */
  worker?: number;
}

export interface App extends FastifyInstance {
  /** Turns /ready to 503 and asks keep-alive clients to close; called when shutdown begins. */
  beginShutdown(): void;
}

/** Request ids taken from callers: short, and nothing that could break a log line or header. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A body that is not JSON, or carries `__proto__`: it fails every body schema, so it is a 400. */
const UNPARSABLE_BODY = Symbol("unparsable body");

// Node refuses request heads over 16 KiB, so no path parameter can be longer than this; ids
// of any length then reach the book routes (and their token check) rather than "Not found".
const MAX_PARAM_LENGTH = 64 * 1024;

// Request lines never carry headers or bodies; these paths are a second guard for any log call.
const REDACTED_LOG_PATHS = [
  "req.headers.authorization",
  "headers.authorization",
  "password",
  "*.password",
  "token",
  "*.token",
];

export async function buildApp(deps: AppDependencies): Promise<App> {
  const { config, store } = deps;
  let shuttingDown = false;

  // Asynchronous writes: lines that arrive while a write is in flight go out together, so a
  // busy server makes one write per batch rather than per request. pino flushes at exit.
  const logDestination = deps.logStream ?? pino.destination({ dest: 1, sync: false });
  const { worker } = deps;
  const idPrefix = worker === undefined ? "" : `w${worker}-`;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      ...(worker === undefined ? {} : { base: { pid: process.pid, hostname: hostname(), worker } }),
      redact: { paths: REDACTED_LOG_PATHS, censor: "[redacted]" },
      stream: logDestination,
    },
    // One line per request is written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request (measured: a tenth of GET throughput); lines that concern a
    // request name its reqId themselves.
    childLoggerFactory: (logger) => logger,
    // A request's id: the caller's X-Request-Id when it is a plausible one, else a new UUID
    // (after "w2-" in worker 2).
    // It is sent back on every response and names the request in every log line about it.
    requestIdHeader: false,
    genReqId: (request) => {
      const sent = request.headers["x-request-id"];
      return typeof sent === "string" && REQUEST_ID.test(sent) ? sent : idPrefix + randomUUID();
    },
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    return503OnClosing: false,
    // A client that never finishes its headers or its body is cut off, and the checks run
    // every second rather than Node's default 30 s.
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(config.headersTimeoutMs, config.requestTimeoutMs),
      connectionsCheckingInterval: 1000,
    },
    clientErrorHandler: answerClientError,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // A wrong type is a 400, never silently coerced ("1999" is not a year, null is not "").
    ajv: { customOptions: { coerceTypes: false } },
    frameworkErrors: (_error, _request, reply) => respond(reply, 400, Messages.badRequest),
  }) as unknown as App;

  // Past the bound, a new connection is closed as soon as it is accepted; the others go on.
  app.server.maxConnections = config.maxConnections;
  let lastDropWarning = 0;
  app.server.on("drop", () => {
    const now = Date.now();
    if (now - lastDropWarning < 10_000) return;
    lastDropWarning = now;
    app.log.warn(
      { maxConnections: config.maxConnections },
      "connection refused: MAX_CONNECTIONS are open",
    );
  });

  app.decorate("beginShutdown", () => {
    shuttingDown = true;
  });

  // The body is JSON whatever its Content-Type, so `curl -d` without -H works.
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

  // Callback hooks, not async ones: no promise per request on the hot path. Every answer
  // carries its request id; once shutdown has begun, every answer (in-flight ones too) closes
  // its connection, so keep-alive clients let go and the server can finish closing.
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("x-request-id", request.id);
    // Every answer, JSON or page or file, is read as the type it names, never sniffed.
    reply.header("x-content-type-options", "nosniff");
    if (shuttingDown) reply.header("connection", "close");
    done(null, payload);
  });
  const { values } = pino.levels;
  if ((values[config.logLevel] ?? Number.POSITIVE_INFINITY) <= (values.info as number)) {
    const accessLog = createAccessLog(logDestination, worker);
    app.addHook("onResponse", (request, reply, done) => {
      accessLog.log(request, reply);
      done();
    });
    // onClose hooks run once the server has closed: no request is left to log.
    app.addHook("onClose", (_app, done) => {
      accessLog.flush();
      done();
    });
  }

  const { metrics } = deps;
  if (metrics) {
    app.addHook("onResponse", (request, reply, done) => {
      metrics.observe(request, reply);
      done();
    });
  }

  const allowedMethods = trackRouteMethods(app);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = handleError(error, request, reply).statusCode;
    if (status === 503) metrics?.storeError("unavailable");
    if (status === 500) metrics?.storeError("error");
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

  const tokens = deps.tokens ?? createTokenService(config.secret);
  const { loginMaxFailures, loginWindowSeconds, rateLimitRedisUrl } = config;
  // The Redis client is loaded only when configured: it weighs 23 MB of memory (measured).
  const limiter =
    deps.limiter ??
    (rateLimitRedisUrl
      ? (await import("../auth/redis-login-limiter.js")).createRedisLoginLimiter(
          rateLimitRedisUrl,
          loginMaxFailures,
          loginWindowSeconds,
        )
      : createMemoryLoginLimiter(loginMaxFailures, loginWindowSeconds));
  app.addHook("onClose", () => limiter.close());

  // The docs page fills in the development pair, which is public knowledge; a configured pair
  // never appears in the document.
  await registerDocs(app, {
    credentialsExample: config.developmentCredentials
      ? { username: config.username, password: config.password }
      : { username: "your-username", password: "your-password" },
  });

  const operations = { tags: ["operations"], security: [] };
  const health = {
    ...operations,
    operationId: "getHealth",
    summary: "Liveness: the process answers",
    description: "200 while the process runs, whatever the store: restart the process if not.",
    response: { 200: answerSchema("EmptyEnvelope", [Messages.healthy]), ...failures({}) },
  };
  app.get("/health", { schema: health }, async (_request, reply) =>
    respond(reply, 200, Messages.healthy),
  );
  const ready = {
    ...operations,
    operationId: "getReadiness",
    summary: "Readiness: the store answers and shutdown has not begun",
    description:
      "200 while the store answers; 503 while it does not, and once shutdown has begun: send no traffic then.",
    response: {
      200: answerSchema("EmptyEnvelope", [Messages.ready]),
      ...failures({ 503: [Messages.serviceUnavailable] }),
    },
  };
  app.get("/ready", { schema: ready }, async (_request, reply) => {
    if (shuttingDown) return respond(reply, 503, Messages.serviceUnavailable);
    await store.ping();
    return respond(reply, 200, Messages.ready);
  });

  await app.register(authRoutes, {
    tokens,
    checkCredentials: createCredentialCheck(config.username, config.password),
    limiter,
  });
  await app.register(bookRoutes, { store, tokens });
  if (deps.webRoot !== undefined) await registerWebPage(app, deps.webRoot);
  await app.ready();
  return app;
}

const CLIENT_ERROR_GRACE_MS = 1000;

/** Requests Node's HTTP parser refused: answered in the envelope, then the connection closes. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
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
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
  // end() only half-closes: a client that never reads nor closes its side would hold the
  // descriptor for minutes (FIN-WAIT-2). It gets a moment to read the answer, then the socket
  // goes; destroying at once could reset the connection before the answer is read.
  const timer = setTimeout(() => socket.destroy(), CLIENT_ERROR_GRACE_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}

function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const invalidBody = request.routeOptions.config.invalidBodyMessage;
  if (error.validation) return respond(reply, 400, invalidBody ?? Messages.badRequest);
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return respond(reply, 413, Messages.payloadTooLarge);
  }
  if (error instanceof SearchTooBroadError) return respond(reply, 400, Messages.searchTooBroad);
  if (error instanceof StoreUnavailableError) {
    request.log.warn({ reqId: request.id, err: error.cause ?? error }, "store unavailable");
    return respond(reply, 503, Messages.serviceUnavailable);
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return respond(reply, 400, invalidBody ?? Messages.badRequest);
  request.log.error({ reqId: request.id, err: error }, "unexpected failure");
  return respond(reply, 500, Messages.internalError);
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
