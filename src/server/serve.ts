// One serving process: the only one, or a worker of the primary (primary.ts).
import cluster from "node:cluster";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { keepChanges } from "../changes/retention.js";
import { type Config, describeDb } from "../config.js";
import { type App, buildApp } from "../http/app.js";
import { standardOutputLog } from "../http/log-destination.js";
import { WEB_ROOT } from "../http/web-page.js";
import { exposedDatabaseWarning } from "../private-files.js";
import { openStore } from "../store/open.js";
import type { BookStore } from "../store/store.js";
import { VERSION } from "../version.js";
import { startBackups } from "./backups.js";
import { fail } from "./fail.js";
import { exitOnUnexpected } from "./fatal.js";
import { greet } from "./greeting.js";
import { createProcessMetrics, serveProcessMetrics } from "./metrics.js";
import { migrationLog } from "./migration-log.js";
import { onStopSignal, SHUTDOWN, shutdown } from "./shutdown.js";
import { answerWhileStarting, cannotListen } from "./starting.js";

export async function serve(config: Config): Promise<void> {
  // In a worker, the primary has said what there is to say about the configuration, and
  // answered on the port while it migrated.
  const worker = cluster.worker?.id;
  const primary = worker === undefined ? undefined : hearPrimary();
  const starting =
    worker === undefined ? await answerWhileStarting(config.host, config.port) : undefined;
  const log = pino({ level: config.logLevel }, standardOutputLog());
  if (worker === undefined) for (const warning of config.warnings) log.warn(warning);
  let store: BookStore;
  try {
    store = await openStore(config, migrationLog(log));
  } catch (error) {
    fail((error as Error).message);
  }
  const metrics = await createProcessMetrics(config, worker !== undefined);
  const app = await buildApp({
    config,
    store,
    webRoot: WEB_ROOT,
    ...(metrics ? { metrics } : {}),
    ...(worker !== undefined ? { worker } : {}),
  });
  exitOnUnexpected(app.log);
  if (worker === undefined) {
    const exposed = exposedDatabaseWarning(config.db);
    if (exposed !== undefined) app.log.warn(exposed);
    app.log.info({ serviceVersion: VERSION, store: describeDb(config.db) }, "store ready");
  }
  await starting?.close();
  await listen(app, store, config, starting?.port ?? config.port);
  if (worker === undefined) greet(config, (app.server.address() as AddressInfo).port);

  // With workers, the primary takes the scheduled backups. Started before /metrics answers,
  // so that its first answer has the time of the newest backup in the folder.
  const backups =
    worker === undefined ? await startBackups(config, app.log, metrics?.registry) : undefined;
  // The primary keeps the change log trimmed (any process may; one is enough).
  const trimming =
    worker === undefined && store.changes !== undefined
      ? keepChanges(store.changes, config.changesKept, app.log)
      : undefined;
  let metricsServer: Server | undefined;
  if (metrics && worker === undefined) {
    try {
      metricsServer = await serveProcessMetrics(config, metrics);
    } catch (error) {
      backups?.stop();
      trimming?.stop();
      await app.close();
      await store.close();
      fail((error as Error).message);
    }
    app.log.info({ host: config.metricsHost, port: config.metricsPort }, "metrics at /metrics");
  }
  stopOnRequest(primary, (reason) => {
    backups?.stop();
    trimming?.stop();
    metricsServer?.close();
    const bounds = { timeoutMs: config.shutdownTimeoutMs, drainMs: config.shutdownDrainMs };
    void shutdown(app, store, bounds, reason);
  });
}

/** Listens on `port` (the one the start-up's answers had, when PORT is 0). */
async function listen(app: App, store: BookStore, config: Config, port: number): Promise<void> {
  try {
    await app.listen({ port, host: config.host });
  } catch (error) {
    await store.close();
    fail(cannotListen(error, config.host, port));
  }
}

/**
 * In a worker, the primary's word to stop, heard from the worker's start: one that came while
 * the worker was starting is acted on once it serves, not lost (the primary would wait on the
 * worker, then kill it). One said before this ran, while the worker's modules loaded, is lost:
 * the primary says it again when the worker listens (primary.ts). A worker whose primary is
 * gone exits at once, by node:cluster's own rule, before any listener of ours.
 */
function hearPrimary(): (stop: (reason: string) => void) => void {
  let heard: string | undefined;
  let act: ((reason: string) => void) | undefined;
  const hear = (reason: string) => {
    heard ??= reason;
    act?.(reason);
  };
  process.on("message", (message: { type?: string }) => {
    if (message?.type === SHUTDOWN) hear("the primary is stopping");
  });
  return (stop) => {
    act = stop;
    if (heard !== undefined) stop(heard);
  };
}

/** Calls `stop` once: on a signal, and in a worker when its primary stops. */
function stopOnRequest(
  primary: ReturnType<typeof hearPrimary> | undefined,
  stop: (reason: string) => void,
): void {
  let stopping = false;
  const stopOnce = (reason: string) => {
    if (stopping) return;
    stopping = true;
    // A worker that begins shutting down on its own tells the primary, which stops them all:
    // /ready then answers 503 in every worker.
    if (primary !== undefined && process.connected) process.send?.({ type: SHUTDOWN });
    stop(reason);
  };
  onStopSignal(stopOnce);
  primary?.(stopOnce);
}
