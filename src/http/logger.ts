import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Writable } from "node:stream";
import type { FastifyServerOptions, RawRequestDefaultExpression } from "fastify";
import { LogController } from "fastify";
import pino from "pino";
import { standardOutputLog } from "./log-destination.js";

/** Request ids taken from callers: short, and nothing that could break a log line or header. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// Request lines never carry headers or bodies; these paths are a second guard for any log call.
const REDACTED_LOG_PATHS = [
  "req.headers.authorization",
  "headers.authorization",
  "password",
  "*.password",
  "token",
  "*.token",
];

/**
 * Where log lines go: standard output unless a stream is given (tests). Writes are
 * asynchronous, so lines that arrive while a write is in flight go out together and a busy
 * server makes one write per batch rather than per request (log-destination.ts).
 */
export const logDestination = (stream?: Writable): Writable | pino.DestinationStream =>
  stream ?? standardOutputLog();

/** Whether lines at `info` are written: the access log's level. */
export function logsInfo(level: string): boolean {
  const { values } = pino.levels;
  return (values[level] ?? Number.POSITIVE_INFINITY) <= (values.info as number);
}

/** Fastify's logger and request ids: JSON lines, secrets redacted, ids named per worker. */
export function loggerOptions(
  level: string,
  destination: Writable | pino.DestinationStream,
  worker: number | undefined,
): Pick<
  FastifyServerOptions,
  "logger" | "logController" | "childLoggerFactory" | "requestIdHeader" | "genReqId"
> {
  const idPrefix = worker === undefined ? "" : `w${worker}-`;
  return {
    logger: {
      level,
      ...(worker === undefined ? {} : { base: { pid: process.pid, hostname: hostname(), worker } }),
      redact: { paths: REDACTED_LOG_PATHS, censor: "[redacted]" },
      stream: destination,
    },
    // One line per request is written by the access log's onResponse hook (hooks.ts).
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request (a tenth of GET throughput: see docs/performance.md); lines
    // that concern a request name its reqId themselves.
    childLoggerFactory: (logger) => logger,
    // A request's id: the caller's X-Request-Id when it is a plausible one, else a new UUID
    // (after "w2-" in worker 2). It is sent back on every response and names the request in
    // every log line about it.
    requestIdHeader: false,
    genReqId: (request: RawRequestDefaultExpression) => {
      const sent = request.headers["x-request-id"];
      return typeof sent === "string" && REQUEST_ID.test(sent) ? sent : idPrefix + randomUUID();
    },
  };
}
