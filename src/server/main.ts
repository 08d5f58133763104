import cluster from "node:cluster";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LoginLimiter } from "../auth/login-limiter.js";
import { type Config, describeDb, loadConfig, loadEnvFile } from "../config.js";
import type { App } from "../http/app.js";
import { WEB_ROOT } from "../http/web-page.js";
import { openStore } from "../store/open.js";
import type { BookStore } from "../store/store.js";
import { greet } from "./greeting.js";
import { runPrimary, SHUTDOWN } from "./primary.js";

/** Start-up failures are one plain line on standard error and exit code 1. */
function fail(message: string): never {
  process.stderr.write(`book-catalogue: start-up failed: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config: Config;
  try {
    loadEnvFile();
    config = loadConfig();
  } catch (error) {
    fail((error as Error).message);
  }
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, fail);
  // Loaded here, so a primary does not hold the server's modules it never runs.
  const { buildApp } = await import("../http/app.js");
  // In a worker, the primary has said what there is to say about the configuration.
  const worker = cluster.worker?.id;

  let store: BookStore;
  try {
    store = await openStore(config);
  } catch (error) {
    fail((error as Error).message);
  }

  // prom-client is loaded only when metrics are on (12 MB of memory, measured).
  const metricsModule =
    config.metricsPort === undefined ? undefined : await import("../http/metrics.js");
  const metrics = metricsModule?.createMetrics();
  if (metrics && worker !== undefined) {
    // The primary serves the sum of every worker's metrics; it asks each worker for these.
    // An aggregator's constructor is what starts answering the primary's requests.
    const { AggregatorRegistry } = await import("prom-client");
    AggregatorRegistry.setRegistries([metrics.registry]);
    new AggregatorRegistry();
  }
  let limiter: LoginLimiter | undefined;
  if (worker !== undefined && config.rateLimitRedisUrl === undefined) {
    limiter = (await import("../auth/primary-login-limiter.js")).createPrimaryLoginLimiter();
  }
  const app = await buildApp({
    config,
    store,
    webRoot: WEB_ROOT,
    ...(metrics ? { metrics } : {}),
    ...(limiter ? { limiter } : {}),
    ...(worker !== undefined ? { worker } : {}),
  });
  if (worker === undefined) {
    for (const warning of config.warnings) app.log.warn(warning);
    app.log.info({ store: describeDb(config.db) }, "store ready");
  }

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await store.close();
    const inUse = (error as { code?: string }).code === "EADDRINUSE";
    fail(
      inUse
        ? `port ${config.port} is in use on ${config.host} (the catalogue already running, or another service?): stop it, or choose another port, e.g. PORT=${config.port === 8080 ? 8081 : config.port + 1}`
        : `cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`,
    );
  }
  if (worker === undefined) greet(config, (app.server.address() as AddressInfo).port);

  let metricsServer: Server | undefined;
  if (metricsModule && metrics && worker === undefined) {
    const { registry } = metrics;
    const server = metricsModule.serveMetrics(registry.contentType, () => registry.metrics());
    metricsServer = server;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(config.metricsPort, config.metricsHost, resolve);
      });
    } catch (error) {
      await app.close();
      await store.close();
      fail(
        `cannot serve metrics on ${config.metricsHost}:${config.metricsPort}: ${(error as Error).message}`,
      );
    }
    app.log.info({ host: config.metricsHost, port: config.metricsPort }, "metrics at /metrics");
  }

  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    // A worker that begins shutting down on its own tells the primary, which stops them all:
    // /ready then answers 503 in every worker.
    if (worker !== undefined && process.connected) process.send?.({ type: SHUTDOWN });
    metricsServer?.close();
    void shutdown(app, store, config.shutdownTimeoutMs, reason);
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  if (worker !== undefined) {
    process.on("message", (message: { type?: string }) => {
      if (message?.type === SHUTDOWN) stop("the primary is stopping");
    });
    // The primary is gone (killed, say): nothing restarts this worker or keeps its limits.
    process.once("disconnect", () => stop("the primary is gone"));
  }
}

/**
 * Stops accepting, lets in-flight requests finish (at most `timeoutMs`), closes the store and
 * exits 0.
 */
async function shutdown(app: App, store: BookStore, timeoutMs: number, reason: string) {
  app.log.info({ reason }, "shutting down");
  app.beginShutdown();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), timeoutMs);
  });
  const closed = app.close().then(() => false);
  if (await Promise.race([closed, timedOut])) {
    app.log.warn(
      { timeoutMs },
      "in-flight requests did not finish in time; closing their connections",
    );
    app.server.closeAllConnections();
    await closed;
  }
  clearTimeout(timer);
  await store.close();
  app.log.info("stopped");
  process.exit(0);
}

await main();
