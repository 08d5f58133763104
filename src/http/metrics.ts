import { createServer, type Server } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { droppedLogLines } from "./log-destination.js";

export interface Metrics {
  registry: Registry;
  /** Counts a finished request and its time, by method, route pattern and status. */
  observe(request: FastifyRequest, reply: FastifyReply): void;
  /** Counts a store failure: `unavailable` or `full` (503s), or `error` (500). */
  storeError(kind: "unavailable" | "full" | "error"): void;
  /** Counts a login answered 503 because the failed-login counts could not be reached. */
  limiterError(): void;
  /** Counts a request answered 503 because the process had no file descriptor left. */
  outOfDescriptors(): void;
  /** Reports the change streams open (`open()`, read at each scrape). */
  watchChangeStreams(open: () => number): void;
  /** Counts a change stream refused at a limit, or dropped for a reader that fell behind. */
  changeStreamEnded(reason: "per client" | "in all" | "fell behind"): void;
}

/** Prometheus metrics: requests, latency, store errors, and the process's own. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ["method", "route", "status"] as const;
  const requests = new Counter({
    name: "book_catalogue_http_requests_total",
    help: "Requests answered, by method, route and status",
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "book_catalogue_http_request_duration_seconds",
    help: "Time to answer, by method, route and status",
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: "book_catalogue_store_errors_total",
    help: "Store failures: unavailable or full (answered 503), or error (answered 500)",
    labelNames: ["kind"] as const,
    registers: [registry],
  });
  const limiterErrors = new Counter({
    name: "book_catalogue_login_limiter_errors_total",
    help: "Logins answered 503 because the failed-login counts (Redis, or the primary) could not be reached",
    registers: [registry],
  });
  const descriptors = new Counter({
    name: "book_catalogue_out_of_descriptors_total",
    help: "Requests answered 503 because the process had no file descriptor left (EMFILE, ENFILE)",
    registers: [registry],
  });
  new Counter({
    name: "book_catalogue_log_lines_dropped_total",
    help: "Log lines dropped because standard output could not take them (a full disk, a closed pipe)",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(droppedLogLines());
    },
  });
  let openStreams = () => 0;
  new Gauge({
    name: "book_catalogue_change_streams",
    help: "Change streams (GET /changes as Server-Sent Events) open now",
    registers: [registry],
    collect() {
      this.set(openStreams());
    },
  });
  const streamsEnded = new Counter({
    name: "book_catalogue_change_streams_refused_total",
    help: "Change streams refused at a limit (per client, in all) or dropped for a reader that fell behind",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  return {
    registry,
    observe(request, reply) {
      // The route's pattern, not the path, so ids do not multiply the series.
      const labels = {
        method: request.method,
        route: request.routeOptions.url ?? "unmatched",
        status: String(reply.statusCode),
      };
      requests.inc(labels);
      duration.observe(labels, reply.elapsedTime / 1000);
    },
    storeError: (kind) => storeErrors.inc({ kind }),
    limiterError: () => limiterErrors.inc(),
    outOfDescriptors: () => descriptors.inc(),
    watchChangeStreams: (open) => {
      openStreams = open;
    },
    changeStreamEnded: (reason) => streamsEnded.inc({ reason }),
  };
}

/** A plain HTTP server answering GET /metrics with `read()`, on a port of its own. */
export function serveMetrics(contentType: string, read: () => Promise<string>): Server {
  const server = createServer(async (request, response) => {
    if (request.method !== "GET" || request.url !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("Not found\n");
      return;
    }
    try {
      const text = await read();
      response.writeHead(200, { "content-type": contentType }).end(text);
    } catch {
      // The cluster's aggregator gives up on a worker that does not answer in time.
      response.writeHead(503, { "content-type": "text/plain" }).end("Metrics unavailable\n");
    }
  });
  // A scraper or two; its descriptors come out of the same budget as the API's.
  server.maxConnections = 16;
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  return server;
}
