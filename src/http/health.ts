import type { FastifyInstance } from "fastify";
import type { BookStore } from "../store/store.js";
import { Messages, respond } from "./envelope.js";
import { answerSchema, failures } from "./openapi.js";

const operations = { tags: ["operations"], security: [] };

const health = {
  ...operations,
  operationId: "getHealth",
  summary: "Liveness: the process answers",
  description: "200 while the process runs, whatever the store: restart the process if not.",
  response: { 200: answerSchema("EmptyEnvelope", [Messages.healthy]), ...failures({}) },
};

const ready = {
  ...operations,
  operationId: "getReadiness",
  summary: "Readiness: the store answers and shutdown has not begun",
  description:
    "200 while the store answers; 503 while it does not, and once shutdown has begun: send no traffic then.",
  response: {
    200: answerSchema("EmptyEnvelope", [Messages.ready]),
    ...failures({ 503: [Messages.serviceUnavailable] }),
  },
};

/** GET /health (liveness) and GET /ready (the store answers, shutdown has not begun). */
export function addHealthRoutes(
  app: FastifyInstance,
  store: BookStore,
  shuttingDown: () => boolean,
): void {
  app.get("/health", { schema: health }, async (_request, reply) =>
    respond(reply, 200, Messages.healthy),
  );
  app.get("/ready", { schema: ready }, async (_request, reply) => {
    if (shuttingDown()) return respond(reply, 503, Messages.serviceUnavailable);
    await store.ping();
    return respond(reply, 200, Messages.ready);
  });
}
