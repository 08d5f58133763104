import type { FastifyInstance } from "fastify";
import { createAccessLog } from "./access-log.js";
import { logsInfo } from "./logger.js";
import type { Metrics } from "./metrics.js";

export interface ResponseHookOptions {
  /** True once shutdown has begun. */
  shuttingDown(): boolean;
  logLevel: string;
  logDestination: { write(lines: string): unknown };
  worker: number | undefined;
  metrics: Metrics | undefined;
}

/**
 * What every answer carries and what is recorded of it. Callback hooks, not async ones: no
 * promise per request on the hot path.
 */
export function addResponseHooks(app: FastifyInstance, options: ResponseHookOptions): void {
  // Every answer carries its request id; once shutdown has begun, every answer (in-flight
  // ones too) closes its connection, so keep-alive clients let go and the server can finish
  // closing.
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("x-request-id", request.id);
    // Every answer, JSON or page or file, is read as the type it names, never sniffed.
    reply.header("x-content-type-options", "nosniff");
    // No shared cache or browser keeps a token or a page of the catalogue; the page and the
    // docs' files say how they may be kept themselves.
    if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
    if (options.shuttingDown()) reply.header("connection", "close");
    done(null, payload);
  });
  if (logsInfo(options.logLevel)) {
    const accessLog = createAccessLog(options.logDestination, options.worker);
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
  const { metrics } = options;
  if (metrics) {
    app.addHook("onResponse", (request, reply, done) => {
      metrics.observe(request, reply);
      done();
    });
  }
}
