// GET /changes as Server-Sent Events: the entries after `since` (or Last-Event-ID), then live.
// Bounded: streams per client and in all; a stream catching up is paced by its reader, and a
// live reader that does not keep up is dropped, never buffered without end; a stream ends
// when its token expires, and at shutdown.
import type { FastifyReply, FastifyRequest } from "fastify";
import { Messages, respond } from "../http/envelope.js";
import type { AccountStore, StoredAccount } from "../store/accounts.js";
import type { Change } from "../store/changes.js";
import type { ChangeFeed, Follower } from "./feed.js";
import { wireChange } from "./schemas.js";

export interface StreamLimits {
  /** Open streams one client (address) may hold. */
  perClient: number;
  /** Open streams in all, in this process. */
  total: number;
  /** A comment this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
  /** What a stream may hold unsent before its reader is dropped. */
  maxBufferedBytes: number;
  /**
   * How often a stream of an account's token asks whether the token still signs the account
   * in (disabled, removed or a new password end it), on any instance.
   */
  accountCheckMs: number;
}

/** Tells a client how long to wait before reconnecting, in ms. */
const RETRY_MS = 2_000;

const event = (change: Change) =>
  `id: ${change.seq}\nevent: ${change.op}\ndata: ${JSON.stringify(wireChange(change))}\n\n`;

/** One comment every `ms` to every stream added, on one timer while any is open. */
function heartbeating(ms: number) {
  const streams = new Set<FastifyReply["raw"]>();
  let timer: NodeJS.Timeout | undefined;
  return {
    add(raw: FastifyReply["raw"]) {
      streams.add(raw);
      timer ??= setInterval(() => {
        for (const each of streams) each.write(": heartbeat\n\n");
      }, ms).unref();
    },
    remove(raw: FastifyReply["raw"]) {
      streams.delete(raw);
      if (streams.size > 0) return;
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/** The stream's head, sent at once: the headers every answer carries, and the retry delay. */
function begin(request: FastifyRequest, raw: FastifyReply["raw"]) {
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-request-id": request.id,
    // nginx passes each event on at once, rather than holding it in its buffer.
    "x-accel-buffering": "no",
  });
  raw.write(`retry: ${RETRY_MS}\n\n`);
}

/**
 * Resolves once `raw` holds at most `bytes` unsent, or has closed. Node tells of a drain only
 * after a write found its buffer full: one that did not (its buffer may still hold more than
 * `bytes`) is not waited for, and the next write will.
 */
function drained(raw: FastifyReply["raw"], bytes: number): Promise<void> {
  if (raw.writableLength <= bytes || raw.destroyed || !raw.writableNeedDrain) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const done = () => {
      raw.off("drain", done);
      raw.off("close", done);
      resolve();
    };
    raw.on("drain", done);
    raw.on("close", done);
  });
}

/**
 * The streams of accounts, checked every `ms` on one timer while any is open: each account read
 * once a check for all its streams, and a stream whose token no longer signs its account in is
 * ended. A check waits for the last to end; one that fails (the store unreachable) ends
 * nothing: the next decides.
 */
function checking(ms: number, read: (id: number) => Promise<StoredAccount | undefined>) {
  const streams = new Map<() => void, StreamAccount>();
  let timer: NodeJS.Timeout | undefined;
  let sweeping = false;
  const check = (pairs: [() => void, StreamAccount][]) => {
    const reads = new Map<number, Promise<StoredAccount | undefined>>();
    return Promise.all(
      pairs.map(async ([end, account]) => {
        const reading = reads.get(account.id) ?? read(account.id);
        reads.set(account.id, reading);
        if (!account.signsIn(await reading)) end();
      }),
    ).catch(() => {});
  };
  const sweep = () => {
    if (sweeping) return;
    sweeping = true;
    void check([...streams]).finally(() => {
      sweeping = false;
    });
  };
  return {
    /** Checked at once too: a change answered while the stream was opening is not missed. */
    add(end: () => void, account: StreamAccount) {
      streams.set(end, account);
      timer ??= setInterval(sweep, ms).unref();
      void check([[end, account]]);
    },
    remove(end: () => void) {
      streams.delete(end);
      if (streams.size > 0) return;
      clearInterval(timer);
      timer = undefined;
    },
    /** Ends at once every stream of the account `id`. */
    end(id: number) {
      for (const [end, account] of [...streams]) if (account.id === id) end();
    },
  };
}

/** The account a stream's token signs in, and whether the token still signs in it as read. */
export interface StreamAccount {
  id: number;
  signsIn(account: StoredAccount | undefined): boolean;
}

/** The follower that writes a stream's events to `raw`, until the stream has `ended`. */
function writing(
  raw: FastifyReply["raw"],
  stream: { limits: StreamLimits; told: StreamEnded; ended(): boolean; end(): void },
): Follower {
  const { limits, told, ended } = stream;
  // Nothing is written once the stream has ended (a write after the end is an error).
  const send = (changes: Change[]) => ended() || raw.write(changes.map(event).join(""));
  return {
    // Catching up, the next page waits until what was sent is half read at most.
    ready: () => drained(raw, limits.maxBufferedBytes / 2).then(() => !ended()),
    catchUp: send,
    take: (changes) => {
      if (ended()) return false;
      send(changes);
      if (raw.writableLength <= limits.maxBufferedBytes) return true;
      told("fell behind");
      return false;
    },
    dropped: stream.end,
  };
}

/** Why a stream was refused or dropped. */
export type StreamEndReason = "per client" | "in all" | "fell behind";
/** What is told of streams refused or dropped (the metrics). */
export type StreamEnded = (reason: StreamEndReason) => void;

export function changeStreams(
  feed: ChangeFeed,
  limits: StreamLimits,
  told: StreamEnded,
  accounts?: AccountStore,
) {
  const open = new Set<() => void>();
  const byClient = new Map<string, number>();
  const heartbeats = heartbeating(limits.heartbeatMs);
  const checks = checking(limits.accountCheckMs, async (id) => accounts?.get(id));

  const refused = (reply: FastifyReply, client: string) => {
    if (open.size >= limits.total) {
      told("in all");
      reply.header("retry-after", 5);
      return respond(reply, 503, Messages.serviceUnavailable);
    }
    if ((byClient.get(client) ?? 0) >= limits.perClient) {
      told("per client");
      reply.header("retry-after", 5);
      return respond(reply, 429, Messages.tooManyRequests);
    }
    return undefined;
  };

  /**
   * Streams from `since` until the token expires at `expiresAt` (ms), or, for an account's
   * token, until it no longer signs the account in.
   */
  async function stream(
    request: FastifyRequest,
    reply: FastifyReply,
    since: number,
    expiresAt: number,
    account?: StreamAccount,
  ): Promise<FastifyReply | undefined> {
    const client = request.ip;
    const refusal = refused(reply, client);
    if (refusal !== undefined) return refusal;
    const raw = reply.raw;
    let ended = false;
    const follower = writing(raw, { limits, told, ended: () => ended, end: () => end() });
    // Counted before the first await, so a burst of opens cannot pass the limits.
    byClient.set(client, (byClient.get(client) ?? 0) + 1);
    let following: { stop(): void } | undefined;
    const expiry = setTimeout(() => end(), Math.max(0, expiresAt - Date.now()));
    const end = () => {
      if (ended) return;
      ended = true;
      open.delete(end);
      heartbeats.remove(raw);
      checks.remove(end);
      clearTimeout(expiry);
      following?.stop();
      const left = (byClient.get(client) ?? 1) - 1;
      if (left === 0) byClient.delete(client);
      else byClient.set(client, left);
      // A reader that is not reading would hold what is unsent, and its connection, for ever.
      if (raw.writableLength > 0) raw.destroy();
      else raw.end();
    };
    open.add(end);
    if (account !== undefined) checks.add(end, account);
    reply.hijack();
    begin(request, raw);
    raw.on("close", end);
    try {
      following = await feed.follow(since, follower);
    } catch {
      end();
      return undefined;
    }
    // Ended while it caught up (the client left, the token expired): nothing more to keep.
    if (ended) following.stop();
    else heartbeats.add(raw);
    return undefined;
  }

  return {
    stream,
    /** How many streams are open. */
    get size() {
      return open.size;
    },
    /**
     * The tokens of the account `id` ended here (disabled, removed, a new password): its
     * streams end at once, before the change is answered; ended elsewhere, at the next check.
     */
    tokensEnded: (id: number) => checks.end(id),
    /** Ends every stream (shutdown). */
    close() {
      for (const end of [...open]) end();
    },
  };
}

/** What `changeStreams` gives. */
export type ChangeStreams = ReturnType<typeof changeStreams>;
