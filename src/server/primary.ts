// WORKERS above 1: this process opens the store once (so migrations run once and a bad
// DB_URL fails once), then runs the workers that serve, restarts any that dies, keeps the
// failed-login counts and the metrics of them all (and on SQLite, their one writer), and
// stops them together.
import cluster, { type Worker } from "node:cluster";
import type { Server } from "node:http";
import { isSea } from "node:sea";
import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import type { Registry } from "prom-client";
import { keepWorkersLoginCounts } from "../auth/open-login-limiter.js";
import { type Config, describeDb } from "../config.js";
import { standardOutputLog } from "../http/log-destination.js";
import { exposedDatabaseWarning } from "../private-files.js";
import { openStore } from "../store/open.js";
import { serveWorkersWrites, tellWorkers } from "../store/sqlite/primary-writer.js";
import { VERSION } from "../version.js";
import { startBackups } from "./backups.js";
import { fail } from "./fail.js";
import { exitOnUnexpected } from "./fatal.js";
import { greet } from "./greeting.js";
import { serveProcessMetrics } from "./metrics.js";
import { migrationLog } from "./migration-log.js";
import { exitOnceLogged, onStopSignal, SHUTDOWN } from "./shutdown.js";
import { answerWhileStarting } from "./starting.js";

// More unexpected exits than this within the window is a crash loop: restarting cannot help.
const CRASH_LOOP_EXITS = 5;
const CRASH_LOOP_WINDOW_MS = 60_000;
// Past the workers' own drain time, the ones still running are killed.
const DRAIN_MARGIN_MS = 5_000;

type Log = pino.Logger;

export async function runPrimary(config: Config): Promise<void> {
  const log = pino(
    { level: config.logLevel, base: { pid: process.pid, role: "primary" } },
    standardOutputLog(),
  );
  exitOnUnexpected(log);
  for (const warning of config.warnings) log.warn(warning);
  // The workers listen once the store is ready; until then, this process answers (starting.ts).
  const starting = await answerWhileStarting(config.host, config.port);
  try {
    await (await openStore(config, migrationLog(log))).close();
  } catch (error) {
    fail((error as Error).message);
  }
  await starting.close();
  const exposed = exposedDatabaseWarning(config.db);
  if (exposed !== undefined) log.warn(exposed);
  log.info(
    { serviceVersion: VERSION, store: describeDb(config.db), workers: config.workers },
    "store ready",
  );
  keepWorkersLoginCounts(config);
  // On a SQLite file, one writer for every worker: this process's.
  const writes =
    config.db.kind === "sqlite"
      ? await serveWorkersWrites(
          config.db.path,
          (message) => log.error(message),
          tellWorkers(() => Object.values(cluster.workers ?? {})),
        ).catch((error) => fail(`cannot start the SQLite writer: ${error.message}`))
      : undefined;
  // The primary's own metrics (its backups'), served with the sum of the workers'. The
  // backups start first, so that /metrics has the newest backup's time from its first answer.
  const own: Registry | undefined =
    config.metricsPort === undefined ? undefined : new (await import("prom-client")).Registry();
  const backups = await startBackups(config, log, own);
  let metricsServer: Server | undefined;
  if (own !== undefined) {
    metricsServer = await serveProcessMetrics(config, undefined, own).catch((error) =>
      fail(error.message),
    );
    log.info({ host: config.metricsHost, port: config.metricsPort }, "metrics at /metrics");
  }
  superviseWorkers(config, log, writes?.env ?? {}, async () => {
    backups?.stop();
    metricsServer?.close();
    await writes?.close();
  });
}

/** Starts the workers, replaces any that dies, and stops them all together. */
function superviseWorkers(
  config: Config,
  log: Log,
  storeEnv: Record<string, string>,
  onStopped: () => Promise<void>,
): void {
  // A secret made up for this run must be the same in every worker, or a token signed by
  // one would be refused by the others.
  const env = { ...storeEnv, SECRET_TOKEN: config.secret };
  // Workers not yet exited (cluster.workers may still list one that has).
  const live = new Set<Worker>();
  // The release's single executable takes its command as the first argument after itself:
  // a worker is started as `<the file> serve` (the script's path would be taken for a command).
  if (isSea()) cluster.setupPrimary({ exec: "serve", args: [] });
  const start = () => live.add(cluster.fork(env));
  const stop = stopper(config, log, live, onStopped);
  const crashLoop = crashLoopDetector();

  cluster.on("message", (_worker, message: { type?: string }) => {
    if (message?.type === SHUTDOWN) stop("a worker began shutting down", 0);
  });
  // A worker that exits by itself before it ever listened could not start (its line says
  // why): starting another would fail the same way.
  const listening = new Set<Worker>();
  let greeted = false;
  cluster.on("listening", (worker, address) => {
    listening.add(worker);
    // A worker told to stop while its modules loaded could not hear it: told again, now.
    if (stop.stopping() && worker.isConnected()) worker.send({ type: SHUTDOWN });
    if (greeted || stop.stopping()) return;
    greeted = true;
    greet(config, address.port);
  });
  cluster.on("exit", (worker, code, signal) => {
    live.delete(worker);
    if (stop.stopping()) return;
    if (!listening.has(worker) && signal === null) return stop("a worker could not start", 1);
    listening.delete(worker);
    const exits = crashLoop.exited();
    if (exits !== undefined) {
      process.stderr.write(
        `book-catalogue: workers keep exiting (${exits} in ${CRASH_LOOP_WINDOW_MS / 1000} s, the last with ${signal ?? `code ${code}`}); stopping\n`,
      );
      return stop("crash loop", 1);
    }
    log.warn({ worker: worker.id, code, signal }, "worker exited; starting another");
    start();
  });
  onStopSignal((reason) => stop(reason, 0));
  for (let i = 0; i < config.workers; i++) start();
}

/** Counts unexpected exits: the count when they make a crash loop, else undefined. */
function crashLoopDetector() {
  const exits: number[] = [];
  return {
    exited(): number | undefined {
      const now = Date.now();
      exits.push(now);
      while ((exits[0] ?? now) < now - CRASH_LOOP_WINDOW_MS) exits.shift();
      return exits.length >= CRASH_LOOP_EXITS ? exits.length : undefined;
    },
  };
}

/** Stops every live worker once, then exits with the code given. */
function stopper(config: Config, log: Log, live: Set<Worker>, onStopped: () => Promise<void>) {
  let stopping = false;
  const stop = (reason: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, "shutting down every worker");
    for (const worker of live) if (worker.isConnected()) worker.send({ type: SHUTDOWN });
    const killer = setTimeout(
      () => {
        for (const worker of live) worker.kill("SIGKILL");
      },
      config.shutdownDrainMs + config.shutdownTimeoutMs + DRAIN_MARGIN_MS,
    );
    // What the primary holds (the writer's last commit) is closed, for a bounded time.
    const finish = async () => {
      clearTimeout(killer);
      await Promise.race([onStopped(), sleep(DRAIN_MARGIN_MS)]);
      log.info("stopped");
      void exitOnceLogged(exitCode);
    };
    if (live.size === 0) void finish();
    else cluster.on("exit", () => live.size === 0 && void finish());
  };
  return Object.assign(stop, { stopping: () => stopping });
}
