// buildApp: what the HTTP app is made of, in the order it is assembled. Each part is a file
// of this folder (or of auth/, books/ and accounts/ for the routes).
import type { Writable } from "node:stream";
import Fastify, { type FastifyInstance } from "fastify";
import { accountRoutes } from "../accounts/routes.js";
import { createCredentialCheck, createNameCheck } from "../auth/credentials.js";
import type { LoginLimiter } from "../auth/login-limiter.js";
import { openLoginLimiter } from "../auth/open-login-limiter.js";
import { PASSWORD_COST, type Passwords, passwordsAt } from "../auth/passwords.js";
import type { TokenCheck } from "../auth/require-token.js";
import { authRoutes } from "../auth/routes.js";
import { builtInPair } from "../auth/signed-in.js";
import { createTokenService, type TokenService } from "../auth/tokens.js";
import { bookRoutes } from "../books/routes.js";
import { changeFeed } from "../changes/feed.js";
import { changeRoutes } from "../changes/routes.js";
import { type ChangeStreams, changeStreams, type StreamEndReason } from "../changes/stream.js";
import type { Config } from "../config.js";
import type { BookStore } from "../store/store.js";
import { parseEveryBodyAsJson } from "./body-parser.js";
import { limitConnections } from "./connections.js";
import { registerDocs } from "./docs.js";
import { Messages, respond } from "./envelope.js";
import { addErrorHandlers, answerClientError } from "./errors.js";
import { addHealthRoutes } from "./health.js";
import { addResponseHooks } from "./hooks.js";
import { boundedServer } from "./in-flight.js";
import { logDestination, loggerOptions } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { sharedSerializers } from "./serializers.js";
import { registerWebPage } from "./web-page.js";

export interface AppDependencies {
  config: Config;
  store: BookStore;
  /** Replaces the token service built from the config (tests use it to make signing fail). */
  tokens?: TokenService;
  /** Replaces the login limiter the config names (open-login-limiter.ts). */
  limiter?: LoginLimiter;
  /** Where log lines go; standard output when absent. */
  logStream?: Writable;
  /** Counts requests and store errors when given. */
  metrics?: Metrics;
  /** A folder holding the built librarian's page, served at `/`; no page when absent. */
  webRoot?: string;
  /** This worker's number, with WORKERS above 1: named in every log line and request id. */
  worker?: number;
  /** How account passwords are hashed; at PASSWORD_COST when absent (tests use a cheaper one). */
  passwords?: Passwords;
}

export interface App extends FastifyInstance {
  /** Turns /ready to 503 and asks keep-alive clients to close; called when shutdown begins. */
  beginShutdown(): void;
}

// Node refuses request heads over 16 KiB, so no path parameter can be longer than this; ids
// of any length then reach the book routes (and their token check) rather than "Not found".
const MAX_PARAM_LENGTH = 64 * 1024;

export async function buildApp(deps: AppDependencies): Promise<App> {
  const { config, store, metrics, worker } = deps;
  const destination = logDestination(deps.logStream);
  const app = Fastify({
    ...loggerOptions(config.logLevel, destination, worker),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    return503OnClosing: false,
    // A client that never finishes its headers or its body is cut off, and the checks run
    // every second rather than Node's default 30 s.
    requestTimeout: config.requestTimeoutMs,
    // An idle keep-alive connection holds a place under MAX_CONNECTIONS: it gives it back
    // within seconds (Fastify's default is 72 s).
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      headersTimeout: Math.min(config.headersTimeoutMs, config.requestTimeoutMs),
      connectionsCheckingInterval: 1000,
    },
    clientErrorHandler: answerClientError,
    // Requests in flight per connection and per client, and the answer to one without Host.
    serverFactory: boundedServer(config),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // A wrong type is a 400, never silently coerced ("1999" is not a year, null is not "").
    // verbose: a refusal's reason names the whole rule its field broke (reasons.ts); it adds
    // work only where validation fails.
    ajv: { customOptions: { coerceTypes: false, verbose: true } },
    frameworkErrors: (_error, _request, reply) => respond(reply, 400, Messages.badRequest),
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers } },
  }) as unknown as App;

  let shuttingDown = false;
  app.decorate("beginShutdown", () => {
    shuttingDown = true;
  });
  limitConnections(app, config);
  parseEveryBodyAsJson(app);
  addResponseHooks(app, {
    shuttingDown: () => shuttingDown,
    logLevel: config.logLevel,
    logDestination: destination,
    worker,
    metrics,
  });
  addErrorHandlers(app, metrics);
  await registerDocs(app, {
    // The docs page fills in the development pair, which is public knowledge; a configured
    // pair never appears in the document.
    credentialsExample: config.developmentCredentials
      ? { username: config.username, password: config.password }
      : { username: "your-username", password: "your-password" },
  });
  addHealthRoutes(app, store, () => shuttingDown);

  await addRoutes(app, deps);
  if (deps.webRoot !== undefined) await registerWebPage(app, deps.webRoot);
  await app.ready();
  return app;
}

/** POST /token, then the book, change and account routes, each behind the token. */
async function addRoutes(app: FastifyInstance, deps: AppDependencies): Promise<void> {
  const { config, store, worker, metrics } = deps;
  const tokens = deps.tokens ?? createTokenService(config.secret);
  const limiter = deps.limiter ?? (await openLoginLimiter(config, worker !== undefined));
  app.addHook("onClose", () => limiter.close());
  const checkCredentials = createCredentialCheck(config.username, config.password);
  const isBuiltInName = createNameCheck(config.username);
  const { accounts } = store;
  const passwords = deps.passwords ?? passwordsAt(PASSWORD_COST);
  const login = { checkCredentials, isBuiltInName, accounts, passwords };
  await app.register(authRoutes, { ...login, tokens, limiter });
  // Every route behind a token knows who it signs in (signed-in.ts).
  app.decorateRequest("signedIn", null as unknown as TokenCheck["builtIn"]);
  const tokenCheck: TokenCheck = { tokens, accounts, builtIn: builtInPair(config.username) };
  await app.register(bookRoutes, { store, tokenCheck });
  let streams: ChangeStreams | undefined;
  if (store.changes !== undefined) {
    const feed = changeFeed(store.changes, config.changesPollMs);
    // A write answered here is read into the feed at once, not at its next poll; one of
    // another process or instance as soon as the store tells of it, when it can.
    app.addHook("onResponse", (request, reply, done) => {
      if (request.method !== "GET" && reply.statusCode < 300) feed.wake();
      done();
    });
    const watching = store.changes.watch?.(feed.wake, (message) => app.log.warn(message));
    if (watching !== undefined) app.addHook("onClose", () => watching.close());
    const told = (reason: StreamEndReason) => metrics?.changeStreamEnded(reason);
    streams = changeStreams(feed, config.changeStreams, told, accounts);
    const changes = { store, log: store.changes, tokenCheck, feed, streams, metrics };
    await app.register(changeRoutes, changes);
  }
  if (accounts !== undefined) {
    // An account's tokens ended here end its change streams (stream.ts).
    const tokensEnded = (id: number) => streams?.tokensEnded(id);
    const options = { accounts, tokenCheck, limiter, isBuiltInName, passwords, tokensEnded };
    await app.register(accountRoutes, options);
  }
}
