// How many requests the service works on at once for one connection (pipelining) and for one
// client, and the answers Node would give bare, in the envelope here: to a request without a
// Host header, to an Expect other than 100-continue, and to a CONNECT. Node parses a connection's
// pipelined requests while the earlier answers are still pending and has no bound of its own:
// each would open its file or read its page at once. Here a request past either bound waits,
// unhandled, and its connection is not read further until it has a place again.

import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from "node:http";
import type { Socket } from "node:net";
import type { FastifyServerFactory } from "fastify";
import type { Config } from "../config.js";
import { clientOf, trustedProxy } from "./connections.js";
import { Messages } from "./envelope.js";
import { answerClientError } from "./errors.js";

type Limits = Pick<Config, "maxPipelinedRequests" | "maxRequestsInFlightPerClient" | "trustProxy">;

interface Client {
  connections: number;
  inFlight: number;
  /** Its connections with a request waiting for a place of the client, first come first. */
  blocked: Connection[];
}

interface Connection {
  bounds: Bounds;
  socket: Socket;
  /** Undefined for a proxy TRUST_PROXY names: it carries many clients. */
  client: Client | undefined;
  inFlight: number;
  /** Requests and their answers, in pairs, parsed but not handed to the app yet. */
  waiting: (IncomingMessage | ServerResponse)[];
  next: number;
  paused: boolean;
  blocked: boolean;
  closed: boolean;
  /** What to do once every request it holds is answered (a CONNECT's refusal). */
  whenAnswered?: () => void;
}

interface FactoryOptions {
  http: ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
}

const CONNECTION = Symbol("connection's requests in flight");
type Tracked = Socket & { [CONNECTION]?: Connection };
type Answer = ServerResponse & { [CONNECTION]: Connection };

function onFinish(this: Answer): void {
  const connection = this[CONNECTION];
  connection.bounds.finished(connection);
}

/**
 * Fastify's server factory: Node's HTTP server as Fastify would make it, whose requests go to
 * the app only within MAX_PIPELINED_REQUESTS of their connection and MAX_REQUESTS_IN_FLIGHT_PER_CLIENT
 * of their client. Each worker counts its own.
 */
export function boundedServer(limits: Limits): FastifyServerFactory {
  return (handler, opts) => {
    // What Fastify passes: its options, defaults filled in.
    const options = opts as unknown as FactoryOptions;
    const bounds = new Bounds(limits, handler as RequestListener);
    // Node's own answer to a request without Host is a bare 400; the app's is in the envelope.
    const server = createServer({ ...options.http, requireHostHeader: false }, bounds.listener);
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    server.on("connection", (socket: Socket) => bounds.track(socket));
    // Node would answer a bare 417, and close a CONNECT (a proxy's method) unanswered.
    server.on("checkExpectation", (_request, response: ServerResponse) =>
      refuse(response, 417, Messages.expectationFailed),
    );
    // A CONNECT pipelined behind other requests waits for their answers: they may have written.
    server.on("connect", (_request, socket: Socket) =>
      bounds.afterAnswers(socket, () =>
        answerClientError(Object.assign(new Error("CONNECT"), { code: "CONNECT" }), socket),
      ),
    );
    return server as Server;
  };
}

class Bounds {
  private readonly clients = new Map<string, Client>();
  private readonly trusted: (address: string) => boolean;
  private readonly perConnection: number;
  private readonly perClient: number;

  constructor(
    limits: Limits,
    private readonly handler: RequestListener,
  ) {
    this.trusted = trustedProxy(limits.trustProxy);
    this.perConnection = limits.maxPipelinedRequests;
    this.perClient = limits.maxRequestsInFlightPerClient;
  }

  readonly listener: RequestListener = (request, response) => {
    if (request.headers.host === undefined && request.httpVersion === "1.1") {
      refuse(response, 400, Messages.badRequest);
      return;
    }
    const connection = (request.socket as Tracked)[CONNECTION];
    if (connection === undefined) {
      this.handler(request, response);
    } else if (connection.next === connection.waiting.length && this.hasPlace(connection)) {
      this.start(connection, request, response);
    } else {
      connection.waiting.push(request, response);
      this.drain(connection);
    }
  };

  track(socket: Tracked): void {
    const address = socket.remoteAddress;
    const key = address === undefined || this.trusted(address) ? undefined : clientOf(address);
    let client: Client | undefined;
    if (key !== undefined) {
      client = this.clients.get(key) ?? { connections: 0, inFlight: 0, blocked: [] };
      this.clients.set(key, client);
      client.connections += 1;
    }
    const connection: Connection = {
      bounds: this,
      socket,
      client,
      inFlight: 0,
      waiting: [],
      next: 0,
      paused: false,
      blocked: false,
      closed: false,
    };
    socket[CONNECTION] = connection;
    // Node resumes reading on its own once the answers' buffers drain: a connection held here
    // stays paused until it has a place again.
    socket.on("resume", () => {
      if (connection.paused) socket.pause();
    });
    socket.once("close", () => this.close(connection, key));
  }

  private hasPlace(connection: Connection): boolean {
    const { client } = connection;
    return (
      connection.inFlight < this.perConnection &&
      (client === undefined || client.inFlight < this.perClient)
    );
  }

  private start(connection: Connection, request: IncomingMessage, response: ServerResponse) {
    connection.inFlight += 1;
    if (connection.client !== undefined) connection.client.inFlight += 1;
    // One listener for every answer, no closure per request: the answer knows its connection.
    (response as Answer)[CONNECTION] = connection;
    response.on("finish", onFinish);
    if (!this.hasPlace(connection)) this.settle(connection);
    this.handler(request, response);
  }

  finished(connection: Connection): void {
    if (connection.closed) return;
    connection.inFlight -= 1;
    const { client } = connection;
    if (client !== undefined) client.inFlight -= 1;
    // The common case, one request at a time: nothing waits, nothing is paused.
    if (connection.paused || (client !== undefined && client.blocked.length > 0)) {
      this.drain(connection);
      if (client !== undefined) this.wake(client);
    }
    if (connection.whenAnswered !== undefined && answered(connection)) connection.whenAnswered();
  }

  /** Runs `then` once every request the socket's connection holds is answered. */
  afterAnswers(socket: Socket, then: () => void): void {
    const connection = (socket as Tracked)[CONNECTION];
    if (connection === undefined || answered(connection)) then();
    else connection.whenAnswered = then;
  }

  /** Hands the connection's waiting requests to the app while it has places. */
  private drain(connection: Connection): void {
    const { waiting } = connection;
    while (connection.next < waiting.length && this.hasPlace(connection)) {
      const request = waiting[connection.next] as IncomingMessage;
      const response = waiting[connection.next + 1] as ServerResponse;
      // The app holds them from here on; the queue lets go.
      waiting[connection.next] = waiting[connection.next + 1] = undefined as never;
      connection.next += 2;
      this.start(connection, request, response);
    }
    if (connection.next === waiting.length) {
      waiting.length = 0;
      connection.next = 0;
    }
    this.settle(connection);
  }

  /**
   * Reads no further from a connection while it has no place or requests waiting (what was
   * already read waits); one held by its client's bound queues for the client's next place.
   */
  private settle(connection: Connection): void {
    const { client } = connection;
    const full = connection.inFlight >= this.perConnection;
    const clientFull = client !== undefined && client.inFlight >= this.perClient;
    if (clientFull && !full && !connection.blocked) {
      connection.blocked = true;
      client.blocked.push(connection);
    }
    setPaused(connection, full || clientFull || connection.next < connection.waiting.length);
  }

  /** A place of the client is free: its connections held for one get it in turn. */
  private wake(client: Client): void {
    while (client.inFlight < this.perClient && client.blocked.length > 0) {
      const connection = client.blocked.shift() as Connection;
      connection.blocked = false;
      if (!connection.closed) this.drain(connection);
    }
  }

  private close(connection: Connection, key: string | undefined): void {
    connection.closed = true;
    connection.waiting.length = 0;
    const { client } = connection;
    if (client === undefined || key === undefined) return;
    client.inFlight -= connection.inFlight;
    connection.inFlight = 0;
    if (connection.blocked) client.blocked.splice(client.blocked.indexOf(connection), 1);
    client.connections -= 1;
    if (client.connections === 0) this.clients.delete(key);
    else this.wake(client);
  }
}

const answered = (connection: Connection) =>
  connection.inFlight === 0 && connection.next === connection.waiting.length;

function setPaused(connection: Connection, paused: boolean): void {
  if (connection.paused === paused || connection.closed) return;
  connection.paused = paused;
  if (paused) connection.socket.pause();
  else connection.socket.resume();
}

/** An answer in the envelope before the app (no Host, an Expect unmet); the connection closes. */
function refuse(response: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ status, message, data: null });
  response.shouldKeepAlive = false;
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
    connection: "close",
  });
  response.end(body);
}
