// Connections a client leaves hanging: the service lets go of them, and bounds how many it holds.
import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { clientOf } from "../../src/http/connections.js";
import { buildTestApp, listenLocally, testConfig } from "../support/helpers.js";
import { freePort, listeners, startService } from "../support/service.js";

const linuxProc = process.platform === "linux" ? false : "counts descriptors in /proc (Linux)";

/** The descriptors a process holds. */
function descriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** The server's longest event-loop delay since the metrics were last read, in ms. */
async function loopDelayMax(metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const seconds = Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1]);
  return Math.round(seconds * 1000);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A socket from `from` that sends the start of a request and then neither finishes it nor reads. */
function slowHeaders(port: number, from: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: from }, () => {
      socket.write("GET /health HTTP/1.1\r\nHost: x\r\n");
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

test("1,000 clients that never finish their headers nor read: 408, then their descriptors are freed; /health answers throughout", {
  skip: linuxProc,
}, async (t) => {
  const metricsPort = await freePort();
  const service = await startService(
    {
      HOST: "127.0.0.1",
      PORT: "0",
      DB_URL: "sqlite::memory:",
      HEADERS_TIMEOUT_SECONDS: "1",
      REQUEST_TIMEOUT_SECONDS: "2",
      MAX_CONNECTIONS: "2000",
      METRICS_PORT: String(metricsPort),
    },
    { direct: true },
  );
  const pid = service.process.pid as number;
  const port = Number(new URL(service.url).port);
  const sockets: Socket[] = [];
  let polling = true;
  const healthFailures: string[] = [];
  let healthChecks = 0;
  const poller = (async () => {
    while (polling) {
      try {
        const response = await fetch(`${service.url}/health`, {
          signal: AbortSignal.timeout(5000),
        });
        await response.text();
        if (response.status !== 200) healthFailures.push(`status ${response.status}`);
      } catch (error) {
        healthFailures.push((error as Error).message);
      }
      healthChecks += 1;
      await sleep(100);
    }
  })();
  try {
    await fetch(`${service.url}/health`).then((response) => response.text());
    await sleep(200);
    const idle = descriptors(pid);
    // Reading the metrics resets the server's event-loop delay: what the next reading shows
    // is the flood's.
    await loopDelayMax(metricsPort);
    // From ten addresses, 100 each: MAX_CONNECTIONS_PER_CLIENT (100) refuses none of them.
    for (let i = 0; i < 10; i++) {
      const from = `127.0.0.${2 + i}`;
      sockets.push(
        ...(await Promise.all(Array.from({ length: 100 }, () => slowHeaders(port, from)))),
      );
    }
    // The answer arrives while nobody reads: it waits in the socket's buffer.
    const answeredBy = Date.now() + 30_000;
    while (sockets.some((socket) => socket.readableLength === 0) && Date.now() < answeredBy) {
      await sleep(100);
    }
    const answered = sockets.filter((socket) => socket.readableLength > 0).length;
    assert.equal(answered, sockets.length, "every slow client got its answer");
    const lastAnswer = Date.now();
    let held = descriptors(pid);
    while (held > idle + 20 && Date.now() - lastAnswer < 15_000) {
      await sleep(250);
      held = descriptors(pid);
    }
    assert.ok(
      held <= idle + 20,
      `${held} descriptors held 15 s after the 408s (idle: ${idle}, 1,000 slow clients)`,
    );
    const first = sockets[0]?.read()?.toString() ?? "";
    assert.match(first, /^HTTP\/1\.1 408 /);
    t.diagnostic(
      `the server's event-loop delay during the flood: max ${await loopDelayMax(metricsPort)} ms (wall clock, from its metrics)`,
    );
  } finally {
    polling = false;
    await poller;
    for (const socket of sockets) socket.destroy();
    assert.equal(await service.stop(), 0);
  }
  assert.deepEqual(healthFailures, []);
  assert.ok(healthChecks > 10, `/health was asked ${healthChecks} times`);
});

/**
 * A keep-alive connection from `from` (any 127.x.y.z is this machine, as another client) that
 * sends whole requests and reads each answer's first line.
 */
function keepAlive(port: number, from = "127.0.0.1") {
  const socket = connect({ port, host: "127.0.0.1", localAddress: from });
  socket.setEncoding("utf8");
  let received = "";
  let closed = false;
  socket.on("data", (chunk) => {
    received += chunk;
  });
  socket.on("error", () => {});
  socket.on("close", () => {
    closed = true;
  });
  return {
    socket,
    /** The last answer, head and body. */
    received: () => received,
    /** Whether the connection is closed (by either side). */
    closed: () => closed,
    /** The status of the answer to one GET /health; 0 when the connection closed instead. */
    async health(): Promise<number> {
      received = "";
      socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
      const deadline = Date.now() + 5000;
      while (!answered(received) && !closed && Date.now() < deadline) {
        await sleep(10);
      }
      return Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
    },
  };
}

test("MAX_CONNECTIONS: a connection past the bound is closed at once, the others are served on", async () => {
  const app = await buildTestApp({ env: { MAX_CONNECTIONS: "20" } });
  const port = Number(new URL(await listenLocally(app)).port);
  try {
    const held = Array.from({ length: 20 }, () => keepAlive(port));
    assert.deepEqual(await Promise.all(held.map((c) => c.health())), Array(20).fill(200));
    const extra = keepAlive(port);
    assert.equal(await extra.health(), 0, "the 21st connection is refused");
    assert.deepEqual(await Promise.all(held.map((c) => c.health())), Array(20).fill(200));
    held[0]?.socket.destroy();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await sleep(20);
      const next = keepAlive(port);
      status = await next.health();
      next.socket.destroy();
    }
    assert.equal(status, 200, "a place freed is taken by the next client");
    for (const c of held) c.socket.destroy();
  } finally {
    await app.close();
  }
});

test("MAX_CONNECTIONS is 800 unless set", () => {
  assert.equal(testConfig().maxConnections, 800);
  assert.equal(testConfig({ MAX_CONNECTIONS: "5000" }).maxConnections, 5000);
  assert.throws(() => testConfig({ MAX_CONNECTIONS: "0" }), /MAX_CONNECTIONS/);
});

type KeepAlive = ReturnType<typeof keepAlive>;

/** Whether `received` holds a whole answer: its head, and a body that is the whole envelope. */
function answered(received: string): boolean {
  const body = received.slice(received.indexOf("\r\n\r\n") + 4);
  try {
    return received.includes("\r\n\r\n") && typeof JSON.parse(body) === "object";
  } catch {
    return false;
  }
}

/**
 * `count` keep-alive connections from `from`, opened 100 at a time, each sent one GET /health
 * and then left idle: those served, and how many the service refused.
 */
async function idleCrowd(port: number, from: string, count: number) {
  const served: KeepAlive[] = [];
  let refused = 0;
  for (let opened = 0; opened < count; opened += 100) {
    const batch = Array.from({ length: Math.min(100, count - opened) }, () =>
      keepAlive(port, from),
    );
    const statuses = await Promise.all(batch.map((c) => c.health()));
    batch.forEach((c, i) => {
      if (statuses[i] === 200) served.push(c);
      else {
        refused += 1;
        c.socket.destroy();
      }
    });
  }
  return { served, refused };
}

/** A new connection from `from` every 250 ms until one is served: the ms it took, or undefined. */
async function servedWithin(port: number, from: string, withinMs: number) {
  const start = Date.now();
  while (Date.now() - start < withinMs) {
    const client = keepAlive(port, from);
    const status = await client.health();
    client.socket.destroy();
    if (status === 200) return Date.now() - start;
    await sleep(250);
  }
  return undefined;
}

test("810 connections from nine clients, each asking once and then idle, fill MAX_CONNECTIONS on the defaults: a new client is served within 15 s, the idle ones are closed", async (t) => {
  const app = await buildTestApp();
  const port = Number(new URL(await listenLocally(app)).port);
  const crowd: KeepAlive[] = [];
  try {
    let refused = 0;
    for (let client = 2; client <= 10; client++) {
      const opened = await idleCrowd(port, `127.0.0.${client}`, 90);
      crowd.push(...opened.served);
      refused += opened.refused;
    }
    assert.ok(
      refused > 0,
      `${crowd.length} held, none refused: MAX_CONNECTIONS (800) was not full`,
    );
    const waited = await servedWithin(port, "127.0.0.1", 15_000);
    assert.ok(waited !== undefined, "a new client is served within 15 s");
    t.diagnostic(`${crowd.length} idle connections held; a new client served after ${waited} ms`);
    const closedBy = Date.now() + 10_000;
    while (crowd.some((c) => !c.closed()) && Date.now() < closedBy) await sleep(100);
    assert.equal(crowd.filter((c) => !c.closed()).length, 0, "the service closed every idle one");
  } finally {
    for (const c of crowd) c.socket.destroy();
    await app.close();
  }
});

test("MAX_CONNECTIONS_PER_CLIENT (100): one client's 810 idle connections hold 100 places; another client is served at once, the same one again once its idle connections are closed", async () => {
  const app = await buildTestApp();
  const port = Number(new URL(await listenLocally(app)).port);
  const other = keepAlive(port, "127.0.0.1");
  let held: KeepAlive[] = [];
  try {
    const crowd = await idleCrowd(port, "127.0.0.2", 810);
    held = crowd.served;
    assert.deepEqual([held.length, crowd.refused], [100, 710]);
    assert.equal(await other.health(), 200, "another client is served at once");
    // Those held are served on; the client's next one is refused meanwhile.
    assert.deepEqual(await Promise.all(held.map((c) => c.health())), Array(100).fill(200));
    const extra = keepAlive(port, "127.0.0.2");
    assert.equal(await extra.health(), 0, "its 101st connection is refused");
    assert.ok(
      (await servedWithin(port, "127.0.0.2", 15_000)) !== undefined,
      "served again within 15 s",
    );
  } finally {
    other.socket.destroy();
    for (const c of held) c.socket.destroy();
    await app.close();
  }
});

test("TRUST_PROXY: a trusted proxy's connections are not counted as one client's; a direct client's are", async () => {
  const app = await buildTestApp({
    env: { TRUST_PROXY: "127.0.0.2", MAX_CONNECTIONS_PER_CLIENT: "10" },
  });
  const port = Number(new URL(await listenLocally(app)).port);
  const proxy = Array.from({ length: 30 }, () => keepAlive(port, "127.0.0.2"));
  const direct = Array.from({ length: 11 }, () => keepAlive(port, "127.0.0.3"));
  try {
    assert.deepEqual(await Promise.all(proxy.map((c) => c.health())), Array(30).fill(200));
    const statuses = await Promise.all(direct.map((c) => c.health()));
    assert.deepEqual(statuses.sort(), [0, ...Array(10).fill(200)]);
  } finally {
    for (const c of [...proxy, ...direct]) c.socket.destroy();
    await app.close();
  }
});

test("KEEP_ALIVE_TIMEOUT_SECONDS: an idle connection is told the timeout and closed after it; a request still arriving is not cut", async () => {
  const app = await buildTestApp({ env: { KEEP_ALIVE_TIMEOUT_SECONDS: "1" } });
  const port = Number(new URL(await listenLocally(app)).port);
  const idle = keepAlive(port);
  const slow = keepAlive(port);
  try {
    assert.equal(await idle.health(), 200);
    assert.match(idle.received(), /^keep-alive: timeout=1\r$/im);
    const answered = Date.now();
    // On the other connection, a second request whose body takes 3 s to arrive.
    assert.equal(await slow.health(), 200);
    const body = JSON.stringify({ username: "nobody", password: "wrong" });
    const before = slow.received().length;
    const answer = () => slow.received().slice(before);
    slow.socket.write(
      `POST /token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    for (const char of body.slice(0, 10)) {
      slow.socket.write(char);
      await sleep(400);
    }
    slow.socket.write(body.slice(10));
    const deadline = Date.now() + 5000;
    while (!/^HTTP\/1\.1 \d{3}/.test(answer()) && Date.now() < deadline) await sleep(20);
    assert.match(answer(), /^HTTP\/1\.1 401 /, "the slow request is answered");
    assert.ok(idle.closed(), "the idle one was closed meanwhile");
    assert.ok(Date.now() - answered >= 1000);
  } finally {
    idle.socket.destroy();
    slow.socket.destroy();
    await app.close();
  }
});

test("WORKERS=2: each worker counts its own connections, so one client holds at most MAX_CONNECTIONS_PER_CLIENT in each", async () => {
  const dir = mkdtempSync(join(tmpdir(), "books-connections-"));
  const service = await startService(
    {
      HOST: "127.0.0.1",
      PORT: "0",
      DB_URL: `sqlite:${join(dir, "books.db")}`,
      WORKERS: "2",
      MAX_CONNECTIONS_PER_CLIENT: "5",
    },
    { direct: true },
  );
  const port = Number(new URL(service.url).port);
  const held: KeepAlive[] = [];
  try {
    const listening = Date.now() + 20_000;
    while (listeners(service).length < 2 && Date.now() < listening) await sleep(50);
    // One at a time: the primary hands each new connection to the next worker in turn.
    for (let i = 0; i < 20; i++) {
      const client = keepAlive(port, "127.0.0.2");
      if ((await client.health()) === 200) held.push(client);
      else client.socket.destroy();
    }
    const byWorker = new Map<string, number>();
    for (const c of held) {
      const worker = /^x-request-id: (w\d+)-/im.exec(c.received())?.[1] ?? "?";
      byWorker.set(worker, (byWorker.get(worker) ?? 0) + 1);
    }
    assert.deepEqual([...byWorker.values()], [5, 5], JSON.stringify([...byWorker]));
    const other = keepAlive(port, "127.0.0.3");
    assert.equal(await other.health(), 200, "another client is served");
    other.socket.destroy();
  } finally {
    for (const c of held) c.socket.destroy();
    assert.equal(await service.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("one client is one IPv4 address, or one IPv6 /64 (a host may pick any address in its own)", () => {
  assert.equal(clientOf("203.0.113.9"), "203.0.113.9");
  assert.equal(clientOf("::ffff:203.0.113.9"), "203.0.113.9");
  for (const address of [
    "2001:db8:0:7::1",
    "2001:0db8:0000:0007:ffff:1:2:3",
    "2001:db8:0:7::%eth0",
  ]) {
    assert.equal(clientOf(address), "2001:db8:0:7::/64", address);
  }
  assert.notEqual(clientOf("2001:db8:0:8::1"), clientOf("2001:db8:0:7::1"));
  assert.equal(clientOf("::1"), "0:0:0:0::/64");
  assert.equal(clientOf("64:ff9b::192.0.2.1"), "64:ff9b:0:0::/64");
});

test("KEEP_ALIVE_TIMEOUT_SECONDS is 5 and MAX_CONNECTIONS_PER_CLIENT 100 unless set; a bad value is a configuration error", () => {
  assert.equal(testConfig().keepAliveTimeoutMs, 5000);
  assert.equal(testConfig().maxConnectionsPerClient, 100);
  const set = testConfig({ KEEP_ALIVE_TIMEOUT_SECONDS: "30", MAX_CONNECTIONS_PER_CLIENT: "400" });
  assert.deepEqual([set.keepAliveTimeoutMs, set.maxConnectionsPerClient], [30_000, 400]);
  assert.throws(
    () => testConfig({ KEEP_ALIVE_TIMEOUT_SECONDS: "0" }),
    /^ConfigError: invalid configuration: KEEP_ALIVE_TIMEOUT_SECONDS must be a whole number from 1 to 3600$/,
  );
  assert.throws(
    () => testConfig({ MAX_CONNECTIONS_PER_CLIENT: "ten" }),
    /^ConfigError: invalid configuration: MAX_CONNECTIONS_PER_CLIENT must be a whole number from 1 to 1000000$/,
  );
});

test("ulimit -n 1024 and 1,100 slow clients on the defaults: no descriptor runs out, an open connection is served on, new clients are served once the slow ones are cut off", {
  skip: linuxProc,
}, async () => {
  const service = await startService(
    {
      HOST: "127.0.0.1",
      PORT: "0",
      DB_URL: "sqlite::memory:",
      HEADERS_TIMEOUT_SECONDS: "1",
      REQUEST_TIMEOUT_SECONDS: "2",
    },
    { descriptorLimit: 1024 },
  );
  const port = Number(new URL(service.url).port);
  const sockets: Socket[] = [];
  const open = keepAlive(port);
  try {
    assert.equal(await open.health(), 200);
    // From eleven addresses, 100 each: the bound they reach is MAX_CONNECTIONS.
    for (let i = 0; i < 11; i++) {
      const batch = Array.from({ length: 100 }, () => {
        const socket = connect({ port, host: "127.0.0.1", localAddress: `127.0.0.${2 + i}` }, () =>
          socket.write("GET /health HTTP/1.1\r\nHost: x\r\n"),
        );
        // Past MAX_CONNECTIONS the server closes the connection at once.
        socket.on("error", () => {});
        return socket;
      });
      sockets.push(...batch);
      await sleep(20);
    }
    assert.equal(await open.health(), 200, "a connection opened before is served on");
    let status = 0;
    const deadline = Date.now() + 15_000;
    while (status !== 200 && Date.now() < deadline) {
      const client = keepAlive(port);
      status = await client.health();
      client.socket.destroy();
      if (status !== 200) await sleep(250);
    }
    assert.equal(status, 200, "a new client is served within 15 s");
    assert.doesNotMatch(service.output(), /EMFILE|too many open files/i);
  } finally {
    open.socket.destroy();
    for (const socket of sockets) socket.destroy();
    assert.equal(await service.stop(), 0);
  }
});

/** The memory a process holds (its resident set), in MB. */
function residentMb(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round(kb / 1024);
}

const BUNDLE = "/docs/static/swagger-ui-bundle.js";

/** A connection from `from` that sends `count` pipelined GETs of `path` at once and never reads. */
async function pipelineUnread(port: number, from: string, path: string, count: number) {
  const socket = connect({ port, host: "127.0.0.1", localAddress: from });
  socket.on("error", () => {});
  await once(socket, "connect");
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(count));
  return socket;
}

/**
 * For `ms`, GET /health every 100 ms (the fetch's own connection, from 127.0.0.1) and watch the
 * server: the slowest answer, and the most descriptors and memory it held meanwhile.
 */
async function watchServer(url: string, pid: number, ms: number) {
  let slowestMs = 0;
  let descriptorsMax = 0;
  let residentMax = 0;
  const statuses = new Set<number>();
  for (const until = Date.now() + ms; Date.now() < until; await sleep(100)) {
    const started = Date.now();
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) });
    await response.text();
    statuses.add(response.status);
    slowestMs = Math.max(slowestMs, Date.now() - started);
    descriptorsMax = Math.max(descriptorsMax, descriptors(pid));
    residentMax = Math.max(residentMax, residentMb(pid));
  }
  return { slowestMs, descriptorsMax, residentMax, statuses: [...statuses] };
}

test("one connection pipelining 3,000 GETs of the docs' largest file and never reading: the server's descriptors and memory stay bounded, /health answers another client at once", {
  skip: linuxProc,
}, async (t) => {
  const service = await startService(
    { HOST: "127.0.0.1", PORT: "0", DB_URL: "sqlite::memory:" },
    { direct: true },
  );
  const pid = service.process.pid as number;
  const port = Number(new URL(service.url).port);
  let socket: Socket | undefined;
  try {
    // The file once, read in full, and the connection the watch below uses, both opened.
    await fetch(`${service.url}${BUNDLE}`).then((response) => response.arrayBuffer());
    await fetch(`${service.url}/health`).then((response) => response.text());
    const idle = { descriptors: descriptors(pid), resident: residentMb(pid) };
    socket = await pipelineUnread(port, "127.0.0.2", BUNDLE, 3000);
    const seen = await watchServer(service.url, pid, 6000);
    t.diagnostic(`idle: ${JSON.stringify(idle)}; under the pipeline: ${JSON.stringify(seen)}`);
    assert.deepEqual(seen.statuses, [200]);
    assert.ok(
      seen.descriptorsMax <= idle.descriptors + 16 + 8,
      `${seen.descriptorsMax} descriptors held (idle: ${idle.descriptors}; MAX_PIPELINED_REQUESTS: 16)`,
    );
    assert.ok(
      seen.residentMax - idle.resident < 150,
      `${seen.residentMax} MB held (idle: ${idle.resident} MB)`,
    );
    assert.ok(seen.slowestMs < 500, `/health took ${seen.slowestMs} ms`);
  } finally {
    socket?.destroy();
    assert.equal(await service.stop(), 0);
  }
  assert.doesNotMatch(service.output(), /EMFILE|"level":50/);
});

test("MAX_REQUESTS_IN_FLIGHT_PER_CLIENT: one client's 10 connections pipelining 300 GETs each, never reading, hold at most its bound of files; another client is served in full at once", {
  skip: linuxProc,
}, async (t) => {
  const service = await startService(
    {
      HOST: "127.0.0.1",
      PORT: "0",
      DB_URL: "sqlite::memory:",
      MAX_REQUESTS_IN_FLIGHT_PER_CLIENT: "20",
    },
    { direct: true },
  );
  const pid = service.process.pid as number;
  const port = Number(new URL(service.url).port);
  const sockets: Socket[] = [];
  try {
    await fetch(`${service.url}${BUNDLE}`).then((response) => response.arrayBuffer());
    await fetch(`${service.url}/health`).then((response) => response.text());
    const idle = descriptors(pid);
    for (let i = 0; i < 10; i++) sockets.push(await pipelineUnread(port, "127.0.0.2", BUNDLE, 300));
    const seen = await watchServer(service.url, pid, 3000);
    const started = Date.now();
    const other = await fetch(`${service.url}${BUNDLE}`).then((response) => response.arrayBuffer());
    const otherMs = Date.now() - started;
    t.diagnostic(
      `idle: ${idle} descriptors; under the pipelines: ${JSON.stringify(seen)}; another client's file: ${otherMs} ms`,
    );
    assert.ok(other.byteLength > 1_000_000);
    assert.ok(otherMs < 1000, `another client's file took ${otherMs} ms`);
    assert.ok(
      seen.descriptorsMax <= idle + 10 + 20 + 8,
      `${seen.descriptorsMax} descriptors held (idle: ${idle}; 10 connections, 20 requests in flight)`,
    );
    assert.ok(seen.slowestMs < 500, `/health took ${seen.slowestMs} ms`);
  } finally {
    for (const socket of sockets) socket.destroy();
    assert.equal(await service.stop(), 0);
  }
});

test("a client that pipelines 2,000 requests and reads gets every answer, in order, past MAX_PIPELINED_REQUESTS and MAX_REQUESTS_IN_FLIGHT_PER_CLIENT", async () => {
  const app = await buildTestApp({
    env: { MAX_PIPELINED_REQUESTS: "3", MAX_REQUESTS_IN_FLIGHT_PER_CLIENT: "4" },
  });
  const port = Number(new URL(await listenLocally(app)).port);
  const clients = [keepAlive(port, "127.0.0.2"), keepAlive(port, "127.0.0.2")];
  try {
    const requests = (tag: string) =>
      Array.from({ length: 1000 }, (_, i) => {
        const path =
          i % 3 === 0 ? "/nope" : i % 3 === 1 ? "/health" : "/docs/static/swagger-ui.css";
        return `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${tag}-${i}\r\n\r\n`;
      }).join("");
    for (const [c, client] of clients.entries()) client.socket.write(requests(`c${c}`));
    // Every answer, however slow: 6 s on a quiet machine, past 20 s beside other test files.
    const deadline = Date.now() + 120_000;
    const count = (text: string) => text.match(/^x-request-id: /gim)?.length ?? 0;
    while (clients.some((c) => count(c.received()) < 1000) && Date.now() < deadline) {
      await sleep(50);
    }
    clients.forEach((client, c) => {
      const ids = [...client.received().matchAll(/^x-request-id: (\S+)\r$/gim)].map((m) => m[1]);
      assert.deepEqual(
        ids,
        Array.from({ length: 1000 }, (_, i) => `c${c}-${i}`),
      );
      const statuses = [...client.received().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
      assert.deepEqual(
        statuses,
        Array.from({ length: 1000 }, (_, i) => (i % 3 === 0 ? "404" : "200")),
      );
    });
  } finally {
    for (const c of clients) c.socket.destroy();
    await app.close();
  }
});

test("ulimit -n 60 and four clients pipelining GETs of files: running out of descriptors is one warning and a counter, the requests it refuses 503, never an error line per request", {
  skip: linuxProc,
}, async (t) => {
  const metricsPort = await freePort();
  const service = await startService(
    {
      HOST: "127.0.0.1",
      PORT: "0",
      DB_URL: "sqlite::memory:",
      METRICS_PORT: String(metricsPort),
    },
    { descriptorLimit: 60 },
  );
  const port = Number(new URL(service.url).port);
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < 4; i++) {
      sockets.push(await pipelineUnread(port, `127.0.0.${2 + i}`, BUNDLE, 100));
    }
    await sleep(2000);
    for (const socket of sockets) socket.destroy();
    await sleep(500);
    const health = await fetch(`${service.url}/health`);
    assert.equal(health.status, 200, "served again once the descriptors are back");
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const refused = Number(/^book_catalogue_out_of_descriptors_total (\d+)$/m.exec(metrics)?.[1]);
    t.diagnostic(`${refused} requests refused for want of a descriptor`);
    assert.ok(refused > 0, "the clients ran the server out of descriptors");
  } finally {
    for (const socket of sockets) socket.destroy();
    assert.equal(await service.stop(), 0);
  }
  const lines = service.output().split("\n");
  const emfile = lines.filter((line) => /EMFILE|too many open files/i.test(line));
  assert.equal(emfile.length, 1, emfile.join("\n"));
  assert.ok(
    lines.some((line) => line.includes(`"url":"${BUNDLE}","statusCode":503`)),
    "a request refused for want of a descriptor is answered 503",
  );
  assert.match(emfile[0] ?? "", /"level":40/);
  assert.deepEqual(
    lines.filter((line) => /"level":(50|60)/.test(line)),
    [],
  );
});

test("MAX_PIPELINED_REQUESTS is 16 and MAX_REQUESTS_IN_FLIGHT_PER_CLIENT 128 unless set; a bad value is a configuration error", () => {
  const defaults = testConfig();
  assert.deepEqual(
    [defaults.maxPipelinedRequests, defaults.maxRequestsInFlightPerClient],
    [16, 128],
  );
  const set = testConfig({
    MAX_PIPELINED_REQUESTS: "1",
    MAX_REQUESTS_IN_FLIGHT_PER_CLIENT: "1000",
  });
  assert.deepEqual([set.maxPipelinedRequests, set.maxRequestsInFlightPerClient], [1, 1000]);
  assert.throws(
    () => testConfig({ MAX_PIPELINED_REQUESTS: "0", MAX_REQUESTS_IN_FLIGHT_PER_CLIENT: "many" }),
    /^ConfigError: invalid configuration: MAX_PIPELINED_REQUESTS must be a whole number from 1 to 1000000; MAX_REQUESTS_IN_FLIGHT_PER_CLIENT must be a whole number from 1 to 1000000$/,
  );
});
