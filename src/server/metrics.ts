// Prometheus metrics, set up in one place for each kind of process: a single process counts
// and serves its own; a worker counts and answers its primary; the primary serves the sum of
// its workers'. prom-client is loaded only when METRICS_PORT is set (its memory: see
// docs/performance.md).
import type { Server } from "node:http";
import type { Registry } from "prom-client";
import type { Config } from "../config.js";
import type { Metrics } from "../http/metrics.js";

type MetricsConfig = Pick<Config, "metricsPort" | "metricsHost">;

/** This serving process's metrics, or undefined when they are off. */
export async function createProcessMetrics(
  config: MetricsConfig,
  inWorker: boolean,
): Promise<Metrics | undefined> {
  if (config.metricsPort === undefined) return undefined;
  const metrics = (await import("../http/metrics.js")).createMetrics();
  if (inWorker) {
    // The primary serves the sum of every worker's metrics; it asks each worker for these.
    // An aggregator's constructor is what starts answering the primary's requests.
    const { AggregatorRegistry } = await import("prom-client");
    AggregatorRegistry.setRegistries([metrics.registry]);
    new AggregatorRegistry();
  }
  return metrics;
}

/**
 * Serves /metrics on METRICS_PORT: `metrics` of a single process, or (without) the sum over
 * the workers of every counter and histogram, and each worker's process figures summed or
 * averaged as prom-client's aggregator does, followed by the primary's `own`. Rejects with a
 * one-line reason.
 */
export async function serveProcessMetrics(
  config: MetricsConfig,
  metrics?: Metrics,
  own?: Registry,
) {
  const { serveMetrics } = await import("../http/metrics.js");
  let server: Server;
  if (metrics !== undefined) {
    const { registry } = metrics;
    server = serveMetrics(registry.contentType, () => registry.metrics());
  } else {
    const registry = new (await import("prom-client")).AggregatorRegistry();
    const sum = async () => {
      const workers = await registry.clusterMetrics();
      return own === undefined ? workers : `${workers.trimEnd()}\n${await own.metrics()}`;
    };
    server = serveMetrics(registry.contentType, sum);
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) =>
      reject(
        new Error(
          `cannot serve metrics on ${config.metricsHost}:${config.metricsPort}: ${error.message}`,
        ),
      ),
    );
    server.listen(config.metricsPort, config.metricsHost, resolve);
  });
  return server;
}
