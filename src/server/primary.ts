// WORKERS above 1: this process opens the store once (so migrations run once and a bad
// DB_URL fails once), then runs the workers that serve, restarts any that dies, keeps the
// failed-login counts and the metrics of them all, and stops them together.
import cluster, { type Worker } from "node:cluster";
import type { Server } from "node:http";
import pino from "pino";
import { createMemoryLoginLimiter } from "../auth/login-limiter.js";
import { serveLoginLimiter } from "../auth/primary-login-limiter.js";
import { type Config, describeDb } from "../config.js";
import { openStore } from "../store/open.js";
import { greet } from "./greeting.js";

/** Sent to a worker: begin shutdown. Sent by a worker: it has begun, so all must. */
export const SHUTDOWN = "book-catalogue:shutdown";

// More unexpected exits than this within the window is a crash loop: restarting cannot help.
const CRASH_LOOP_EXITS = 5;
const CRASH_LOOP_WINDOW_MS = 60_000;
// Past the workers' own drain time, the ones still running are killed.
const DRAIN_MARGIN_MS = 5_000;

export async function runPrimary(config: Config, fail: (message: string) => never): Promise<void> {
  const log = pino({ level: config.logLevel, base: { pid: process.pid, role: "primary" } });
  for (const warning of config.warnings) log.warn(warning);
  try {
    await (await openStore(config)).close();
  } catch (error) {
    fail((error as Error).message);
  }
  log.info({ store: describeDb(config.db), workers: config.workers }, "store ready");

  if (config.rateLimitRedisUrl === undefined) {
    serveLoginLimiter(createMemoryLoginLimiter(config.loginMaxFailures, config.loginWindowSeconds));
  }
  let metricsServer: Server | undefined;
  if (config.metricsPort !== undefined) {
    const [{ AggregatorRegistry }, { serveMetrics }] = await Promise.all([
      import("prom-client"),
      import("../http/metrics.js"),
    ]);
    const registry = new AggregatorRegistry();
    // The sum over the workers of every counter and histogram; each worker's process
    // figures too, summed or averaged as prom-client's aggregator does.
    const server = serveMetrics(registry.contentType, () => registry.clusterMetrics());
    metricsServer = server;
    await new Promise<void>((resolve) => {
      server.once("error", (error) =>
        fail(
          `cannot serve metrics on ${config.metricsHost}:${config.metricsPort}: ${error.message}`,
        ),
      );
      server.listen(config.metricsPort, config.metricsHost, resolve);
    });
    log.info({ host: config.metricsHost, port: config.metricsPort }, "metrics at /metrics");
  }

  // A secret made up for this run must be the same in every worker, or a token signed by
  // one would be refused by the others.
  const env = { SECRET_TOKEN: config.secret };
  let stopping = false;
  const exits: number[] = [];
  // Workers not yet exited (cluster.workers may still list one that has).
  const live = new Set<Worker>();
  const start = () => live.add(cluster.fork(env));

  const stop = (reason: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, "shutting down every worker");
    for (const worker of live) if (worker.isConnected()) worker.send({ type: SHUTDOWN });
    const killer = setTimeout(() => {
      for (const worker of live) worker.kill("SIGKILL");
    }, config.shutdownTimeoutMs + DRAIN_MARGIN_MS);
    const finish = () => {
      clearTimeout(killer);
      metricsServer?.close();
      log.info("stopped");
      log.flush();
      process.exit(exitCode);
    };
    if (live.size === 0) finish();
    else cluster.on("exit", () => live.size === 0 && finish());
  };

  cluster.on("message", (_worker, message: { type?: string }) => {
    if (message?.type === SHUTDOWN) stop("a worker began shutting down", 0);
  });
  // A worker that exits by itself before it ever listened could not start (its line says
  // why): starting another would fail the same way.
  const listening = new Set<Worker>();
  let greeted = false;
  cluster.on("listening", (worker, address) => {
    listening.add(worker);
    if (!greeted) {
      greeted = true;
      greet(config, address.port);
    }
  });
  cluster.on("exit", (worker, code, signal) => {
    live.delete(worker);
    if (stopping) return;
    if (!listening.has(worker) && signal === null) {
      stop("a worker could not start", 1);
      return;
    }
    listening.delete(worker);
    const now = Date.now();
    exits.push(now);
    while ((exits[0] ?? now) < now - CRASH_LOOP_WINDOW_MS) exits.shift();
    if (exits.length >= CRASH_LOOP_EXITS) {
      process.stderr.write(
        `book-catalogue: workers keep exiting (${exits.length} in ${CRASH_LOOP_WINDOW_MS / 1000} s, the last with ${signal ?? `code ${code}`}); stopping\n`,
      );
      stop("crash loop", 1);
      return;
    }
    log.warn({ worker: worker.id, code, signal }, "worker exited; starting another");
    start();
  });
  process.once("SIGTERM", () => stop("SIGTERM", 0));
  process.once("SIGINT", () => stop("SIGINT", 0));

  for (let i = 0; i < config.workers; i++) start();
}
