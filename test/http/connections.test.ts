// Connections a client leaves hanging: the service lets go of them, and bounds how many it holds.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { test } from "node:test";
import { buildTestApp, listenLocally, testConfig } from "../support/helpers.js";
import { freePort, startService } from "../support/service.js";

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

/** A socket that sends the start of a request and then neither finishes it nor reads. */
function slowHeaders(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
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
    for (let i = 0; i < 10; i++) {
      sockets.push(...(await Promise.all(Array.from({ length: 100 }, () => slowHeaders(port)))));
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

/** A keep-alive connection that sends whole requests and reads each answer's first line. */
function keepAlive(port: number) {
  const socket = connect(port, "127.0.0.1");
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
    /** The status of the answer to one GET /health; 0 when the connection closed instead. */
    async health(): Promise<number> {
      received = "";
      socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
      const deadline = Date.now() + 5000;
      while (!received.includes('"data":null}') && !closed && Date.now() < deadline) {
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
    for (let i = 0; i < 11; i++) {
      const batch = Array.from({ length: 100 }, () => {
        const socket = connect(port, "127.0.0.1", () =>
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
