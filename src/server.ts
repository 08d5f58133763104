import type { Server } from "node:http";
import { type App, buildApp } from "./app.js";
import { type Config, describeDb, loadConfig, loadEnvFile } from "./config.js";
import { openStore } from "./store/open.js";
import type { BookStore } from "./store/store.js";
import { WEB_ROOT } from "./web.js";

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

  let store: BookStore;
  try {
    store = await openStore(config);
  } catch (error) {
    fail((error as Error).message);
  }

  // prom-client is loaded only when metrics are on (12 MB of memory, measured).
  const metricsModule = config.metricsPort === undefined ? undefined : await import("./metrics.js");
  const metrics = metricsModule?.createMetrics();
  const app = await buildApp({
    config,
    store,
    webRoot: WEB_ROOT,
    ...(metrics ? { metrics } : {}),
  });
  for (const warning of config.warnings) app.log.warn(warning);
  app.log.info({ store: describeDb(config.db) }, "store ready");

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await store.close();
    fail(`cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`);
  }

  let metricsServer: Server | undefined;
  if (metricsModule && metrics) {
    const server = metricsModule.serveMetrics(metrics);
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
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    metricsServer?.close();
    void shutdown(app, store, config.shutdownTimeoutMs, signal);
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

/**
 * Stops accepting, lets in-flight requests finish (at most `timeoutMs`), closes the store and
 * exits 0.
 */
async function shutdown(app: App, store: BookStore, timeoutMs: number, signal: string) {
  app.log.info({ signal }, "shutting down");
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
