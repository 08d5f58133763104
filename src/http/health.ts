import type { FastifyInstance } from "fastify";
import { withDeadline } from "../store/deadline.js";
import { type BookStore, StoreUnavailableError } from "../store/store.js";
import { VERSION } from "../version.js";
import { Messages, respond } from "./envelope.js";
import { answerSchema, failures } from "./openapi.js";

const operations = { tags: ["operations"], security: [] };

/** How long /ready waits for the store: a balancer's check needs an answer, not a hang. */
export const READY_TIMEOUT_MS = 2_000;

const health = {
  ...operations,
  operationId: "getHealth",
  summary: "Liveness: the process answers",
  description:
    "200 while the process runs, whatever the store: restart the process if not. Its data names the version the process runs.",
  response: { 200: answerSchema("HealthEnvelope", [Messages.healthy]), ...failures({}) },
};

const ready = {
  ...operations,
  operationId: "getReadiness",
  summary: "Readiness: the store answers and shutdown has not begun",
  description:
    "200 while the store answers within 2 s; 503 while it does not, while the service starts (the store opening or migrating), and once shutdown has begun: send no traffic then.",
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
    respond(reply, 200, Messages.healthy, { version: VERSION }),
  );
  app.get("/ready", { schema: ready }, async (_request, reply) => {
    if (shuttingDown()) return respond(reply, 503, Messages.serviceUnavailable);
    // The ping, or StoreUnavailableError (503) once READY_TIMEOUT_MS have passed.
    await withDeadline(store.ping(), READY_TIMEOUT_MS, () => new StoreUnavailableError());
    return respond(reply, 200, Messages.ready);
  });
}
