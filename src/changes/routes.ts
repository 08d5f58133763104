// The change log's routes: GET /changes (a page, or a live stream), a book's history, and the
// restore of a deleted book. Every one is behind the token; readers may read, librarians restore.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { requireToken, type TokenCheck } from "../auth/require-token.js";
import { allow, changedBy, signsIn } from "../auth/signed-in.js";
import { versionHeaders } from "../books/conditions.js";
import { readIntegerParameters } from "../books/listing.js";
import { readBookId } from "../books/routes.js";
import { Messages, respond } from "../http/envelope.js";
import type { Metrics } from "../http/metrics.js";
import { setReason } from "../http/reasons.js";
import type { StoredAccount } from "../store/accounts.js";
import { BookExistsError, type ChangeLog, ChangesGoneError } from "../store/changes.js";
import type { BookStore } from "../store/store.js";
import type { ChangeFeed } from "./feed.js";
import {
  bookHistorySchema,
  DEFAULT_CHANGES_LIMIT,
  listChangesSchema,
  restoreBookSchema,
} from "./route-schemas.js";
import { wireChange } from "./schemas.js";
import type { ChangeStreams } from "./stream.js";

export interface ChangeRoutesOptions {
  store: BookStore;
  log: ChangeLog;
  tokenCheck: TokenCheck;
  /** The live feed GET /changes streams from (feed.ts). */
  feed: ChangeFeed;
  /** Its streams (stream.ts). */
  streams: ChangeStreams;
  metrics: Metrics | undefined;
}

type Page = { Querystring: { since?: number; limit?: number } };
type ChangesPage = { Querystring: { since?: number | "now"; limit?: number } };
type WithId = { Params: { id: number } };
const invalidInput = { invalidBodyMessage: Messages.invalidInput };

const readQuery = (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
  readIntegerParameters(request.query as Record<string, unknown>);
  done();
};

/** 410: what is kept, and where to go on from once the catalogue is read again. */
async function gone(reply: FastifyReply, log: ChangeLog, error: ChangesGoneError) {
  reply.header("changes-oldest-kept", error.oldest);
  reply.header("link", `</changes?since=${await log.latest()}>; rel="next"`);
  return respond(reply, 410, Messages.changesGone);
}

/**
 * The 410 of a `since` past the newest sequence, or undefined: never given by this catalogue
 * (one of another, say, restored from its backup), it would wait for entries to come and
 * miss those before it. Asked only when `since` found nothing.
 */
async function pastNewest(log: ChangeLog, since: number): Promise<ChangesGoneError | undefined> {
  const latest = await log.latest();
  if (since <= latest) return undefined;
  try {
    const [first] = await log.list(0, 1);
    return new ChangesGoneError(first?.seq ?? latest + 1);
  } catch (error) {
    if (error instanceof ChangesGoneError) return error;
    throw error;
  }
}

/** A stream's place to start: Last-Event-ID when the client sends one (a reconnect). */
function streamSince(request: FastifyRequest, since: number): number | undefined {
  const last = request.headers["last-event-id"];
  if (last === undefined) return since;
  const id = typeof last === "string" && /^(0|[1-9][0-9]{0,15})$/.test(last) ? Number(last) : -1;
  // As `since`: a whole number up to 2^53 - 1.
  return Number.isSafeInteger(id) && id >= 0 ? id : undefined;
}

/** A stream is for GET: a HEAD is answered as the page, headers only, at once. */
const wantsStream = (request: FastifyRequest) =>
  request.method === "GET" && request.headers.accept?.includes("text/event-stream") === true;

export async function changeRoutes(app: FastifyInstance, options: ChangeRoutesOptions) {
  const { store, log, tokenCheck, feed, streams, metrics } = options;
  metrics?.watchChangeStreams(() => streams.size);
  app.addHook("onRequest", requireToken(tokenCheck));
  app.addHook("preClose", (done) => {
    streams.close();
    feed.close();
    done();
  });

  /** The entries from `since`, then live, until the token expires. */
  const stream = async (request: FastifyRequest, reply: FastifyReply, asked: number) => {
    const since = streamSince(request, asked);
    if (since === undefined) {
      setReason(reply, "Last-Event-ID: a sequence, a whole number");
      return respond(reply, 400, Messages.invalidInput);
    }
    const token = request.headers.authorization?.trim().replace(/^bearer\s+/i, "") ?? "";
    const verified = tokenCheck.tokens.verify(token);
    if (verified === false) return respond(reply, 401, Messages.invalidToken);
    // A `since` no longer kept, or past the newest, is 410 before the stream begins.
    if ((await log.list(since, 1)).length === 0) {
      const beyond = await pastNewest(log, since);
      if (beyond !== undefined) throw beyond;
    }
    // An account's stream ends once its token no longer signs the account in.
    const { account: id } = verified;
    const account =
      id === undefined
        ? undefined
        : { id, signsIn: (read: StoredAccount | undefined) => signsIn(verified, read) };
    return streams.stream(request, reply, since, verified.expiresAt, account);
  };

  app.get<ChangesPage>(
    "/changes",
    { schema: listChangesSchema, config: invalidInput, preValidation: readQuery },
    async (request, reply) => {
      const { limit = DEFAULT_CHANGES_LIMIT } = request.query;
      try {
        const asked = request.query.since ?? 0;
        const since = asked === "now" ? await log.latest() : asked;
        if (wantsStream(request)) return await stream(request, reply, since);
        const changes = await log.list(since, limit);
        const beyond = changes.length === 0 ? await pastNewest(log, since) : undefined;
        if (beyond !== undefined) return gone(reply, log, beyond);
        const next = changes.at(-1)?.seq ?? since;
        reply.header("link", `</changes?since=${next}&limit=${limit}>; rel="next"`);
        return respond(reply, 200, Messages.changesRetrieved, changes.map(wireChange));
      } catch (error) {
        if (error instanceof ChangesGoneError) return gone(reply, log, error);
        throw error;
      }
    },
  );

  app.get<WithId & Page>(
    "/book/:id/history",
    {
      schema: bookHistorySchema,
      config: invalidInput,
      preValidation: (request, reply, done) =>
        readQuery(request, reply, () => readBookId(request, reply, done)),
    },
    async (request, reply) => {
      const { since = 0, limit = DEFAULT_CHANGES_LIMIT } = request.query;
      const { id } = request.params;
      const changes = await log.history(id, since, limit);
      // 404 when the book does not exist and no entry of it is kept, whatever `since`.
      const unknown = async () =>
        (await store.get(id)) === undefined &&
        (since === 0 || (await log.history(id, 0, 1)).length === 0);
      if (changes.length === 0 && (await unknown())) {
        return respond(reply, 404, Messages.bookNotFound);
      }
      return respond(reply, 200, Messages.historyRetrieved, changes.map(wireChange));
    },
  );

  app.post<WithId>(
    "/book/:id/restore",
    { schema: restoreBookSchema, onRequest: allow("librarian"), preValidation: readBookId },
    async (request, reply) => {
      try {
        const book = await store.restore(request.params.id, changedBy(request));
        if (book === undefined) return respond(reply, 404, Messages.bookNotFound);
        versionHeaders(reply, book);
        return respond(reply, 201, Messages.bookRestored, book);
      } catch (error) {
        if (error instanceof BookExistsError) return respond(reply, 409, Messages.bookExists);
        throw error;
      }
    },
  );
}
