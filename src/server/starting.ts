// While the store opens and migrates (a large catalogue's migration takes minutes), the port
// answers already: /health 200 with the version, as it will once serving, and every other
// request 503 in the envelope, /ready among them. A supervisor or a balancer tells "starting"
// from "dead", and a request answered 503 here has written nothing. Closed once the store is
// ready; the service then listens on the same port.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Messages } from "../http/envelope.js";
import { VERSION } from "../version.js";
import { fail } from "./fail.js";

export interface Starting {
  /** The port it answers on (the one chosen, when PORT is 0). */
  readonly port: number;
  /** Stops taking connections; each one it has ends with its answer. */
  close(): Promise<void>;
}

function send(response: ServerResponse, status: number, message: string, data: unknown): void {
  const body = JSON.stringify({ status, message, data });
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    connection: "close",
    ...(status === 503 ? { "retry-after": "5" } : {}),
  });
  response.end(body);
}

/** Answers on HOST and PORT until closed, or fails start-up when it cannot listen there. */
export async function answerWhileStarting(host: string, port: number): Promise<Starting> {
  const server = createServer((request, response) => {
    const path = request.url?.split("?")[0];
    if (path === "/health" && (request.method === "GET" || request.method === "HEAD")) {
      send(response, 200, Messages.healthy, { version: VERSION });
    } else {
      send(response, 503, Messages.serviceUnavailable, null);
    }
  });
  await new Promise<void>((resolve) => {
    server.once("error", (error) => fail(cannotListen(error, host, port)));
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        // Every answer closes its connection: none is left to wait for but those still idle.
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/** Why the service cannot listen on `host`:`port`, and what to do. */
export function cannotListen(error: unknown, host: string, port: number): string {
  if ((error as { code?: string }).code !== "EADDRINUSE") {
    return `cannot listen on ${host}:${port}: ${(error as Error).message}`;
  }
  const other = port === 8080 ? 8081 : port + 1;
  return `port ${port} is in use on ${host} (the catalogue already running, or another service?): stop it, or choose another port, e.g. PORT=${other}`;
}
