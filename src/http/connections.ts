// How many connections the service holds, and how many of them one client may hold. Idle
// keep-alive connections are let go after KEEP_ALIVE_TIMEOUT_SECONDS (app.ts), so a crowd of
// them gives its places back within seconds.

import { isIPv4, type Socket } from "node:net";
import proxyAddr from "@fastify/proxy-addr";
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";

type Limits = Pick<Config, "maxConnections" | "maxConnectionsPerClient" | "trustProxy">;

const WARNING_INTERVAL_MS = 10_000;

/**
 * Past either bound, a new connection is closed as soon as it is accepted, before a byte of it
 * is read; the connections already open go on. Each worker counts its own connections.
 */
export function limitConnections(app: FastifyInstance, limits: Limits): void {
  const { maxConnections, maxConnectionsPerClient } = limits;
  app.server.maxConnections = maxConnections;
  const dropWarning = rateLimited();
  app.server.on("drop", () => {
    if (dropWarning()) {
      app.log.warn({ maxConnections }, "connection refused: MAX_CONNECTIONS are open");
    }
  });
  const trusted = trustedProxy(limits.trustProxy);
  const open = new Map<string, number>();
  const clientWarning = rateLimited();
  app.server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress;
    // A proxy's connection carries the requests of many clients in turn: counting it against
    // the proxy's address would let one client's burst lock out everyone behind it.
    if (address === undefined || trusted(address)) return;
    const client = clientOf(address);
    const count = (open.get(client) ?? 0) + 1;
    if (count > maxConnectionsPerClient) {
      socket.destroy();
      if (clientWarning()) {
        app.log.warn(
          { client, maxConnectionsPerClient },
          "connection refused: MAX_CONNECTIONS_PER_CLIENT are open from this client",
        );
      }
      return;
    }
    open.set(client, count);
    socket.once("close", () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left > 0) open.set(client, left);
      else open.delete(client);
    });
  });
}

/** True at most once every ten seconds: a flood of refusals is one warning, not thousands. */
function rateLimited(): () => boolean {
  let last = 0;
  return () => {
    const now = Date.now();
    if (now - last < WARNING_INTERVAL_MS) return false;
    last = now;
    return true;
  };
}

/** Whether a connection comes from a proxy TRUST_PROXY names, read as Fastify reads it. */
export function trustedProxy(trustProxy: Config["trustProxy"]): (address: string) => boolean {
  if (trustProxy === true) return () => true;
  if (trustProxy === false) return () => false;
  const trust = proxyAddr.compile(trustProxy.split(",").map((entry) => entry.trim()));
  return (address) => trust(address, 0);
}

/**
 * The client a connection counts against: its IPv4 address, or the first 64 bits of its IPv6
 * address, since a single host commonly holds a whole /64 and may pick any address in it.
 */
export function clientOf(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return mapped;
  if (isIPv4(address)) return address;
  const [head = "", tail = ""] = address.replace(/%.*$/, "").split("::");
  const left = head === "" ? [] : head.split(":");
  // An IPv4 tail (64:ff9b::192.0.2.1) holds two groups.
  const right =
    tail === "" ? [] : tail.split(":").flatMap((g) => (g.includes(".") ? [g, ""] : [g]));
  const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  const prefix = groups.slice(0, 4).map((group) => Number.parseInt(group || "0", 16).toString(16));
  return `${prefix.join(":")}::/64`;
}
