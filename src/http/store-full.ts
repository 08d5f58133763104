// A full disk is an episode, not a stream of errors: each write it refuses is answered 503
// with Retry-After and counted, one warning marks its start and one line its end (the first
// write that succeeds again), rather than a line per refused request.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Messages, respond } from "./envelope.js";
import type { Metrics } from "./metrics.js";

/** Seconds a client is asked to wait before writing to a full store again. */
export const FULL_RETRY_AFTER_SECONDS = 5;

const WRITES = new Set(["POST", "PUT", "DELETE"]);

/** Adds the hook that sees the episode end; returns the answer to a write refused for space. */
export function watchStoreFull(
  app: FastifyInstance,
  metrics: Metrics | undefined,
): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  let episode: { since: number; refused: number } | undefined;
  app.addHook("onResponse", (request, reply, done) => {
    if (episode !== undefined && WRITES.has(request.method) && reply.statusCode < 300) {
      const { since, refused } = episode;
      episode = undefined;
      app.log.info({ refused, seconds: (Date.now() - since) / 1000 }, "store writes succeed again");
    }
    done();
  });
  return (request, reply) => {
    metrics?.storeError("full");
    if (episode === undefined) {
      episode = { since: Date.now(), refused: 0 };
      app.log.warn(
        { reqId: request.id },
        "store full: writes answer 503 until there is space again; reads go on",
      );
    }
    episode.refused += 1;
    reply.header("retry-after", String(FULL_RETRY_AFTER_SECONDS));
    return respond(reply, 503, Messages.serviceUnavailable);
  };
}
