// Prometheus metrics: requests and latency by route and status, store errors, the process.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { createRedisLoginLimiter } from "../../src/auth/redis-login-limiter.js";
import { createMetrics } from "../../src/http/metrics.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { buildTestApp, call, tokenFor } from "../support/helpers.js";
import { startService } from "../support/service.js";

test("requests are counted by method, route pattern and status, with their time", async () => {
  const metrics = createMetrics();
  const app = await buildTestApp({ metrics });
  const token = await tokenFor(app);
  const { data } = (
    await call<{ id: number }>(app, "POST", "/book", {
      token,
      body: { title: "Dune", author: "Frank Herbert", year: 1965 },
    })
  ).body;
  await call(app, "GET", `/book/${data?.id}`, { token });
  await call(app, "GET", "/book/424242", { token });
  await call(app, "GET", "/book/424243", { token });
  await call(app, "GET", "/nowhere");
  await app.close();
  const text = await metrics.registry.metrics();
  const count = (labels: string) =>
    Number(new RegExp(`book_catalogue_http_requests_total\\{${labels}\\} (\\d+)`).exec(text)?.[1]);
  assert.equal(count('method="GET",route="/book/:id",status="200"'), 1);
  assert.equal(count('method="GET",route="/book/:id",status="404"'), 2);
  assert.equal(count('method="POST",route="/book",status="201"'), 1);
  assert.equal(count('method="POST",route="/token",status="200"'), 1);
  assert.equal(count('method="GET",route="unmatched",status="404"'), 1);
  assert.match(
    text,
    /book_catalogue_http_request_duration_seconds_bucket\{le="0.001",method="GET",route="\/book\/:id",status="200"\}/,
  );
  assert.match(text, /process_cpu_user_seconds_total/);
});

test("a login limiter that cannot be reached is counted as such, not as a store error", async () => {
  const metrics = createMetrics();
  // Logins count failures in a Redis that cannot be reached: a real 503.
  const app = await buildTestApp({
    metrics,
    limiter: createRedisLoginLimiter(`redis://127.0.0.1:${await freePort()}`, 5, 60),
  });
  assert.equal(
    (await call(app, "POST", "/token", { body: { username: "a", password: "b" } })).status,
    503,
  );
  await app.close();
  const text = await metrics.registry.metrics();
  assert.match(text, /book_catalogue_login_limiter_errors_total 1/);
  assert.doesNotMatch(text, /book_catalogue_store_errors_total\{/);
});

test("store failures are counted", async () => {
  const dir = mkdtempSync(join(tmpdir(), "books-metrics-"));
  const path = join(dir, "books.db");
  const metrics = createMetrics();
  const app = await buildTestApp({ metrics, store: openSqliteStore(path) });
  // Another connection holds the write lock past the store's busy timeout: a real 503.
  const other = new DatabaseSync(path);
  other.exec("BEGIN IMMEDIATE");
  try {
    const token = await tokenFor(app);
    const book = { title: "Locked", author: "Out", year: 2000 };
    assert.equal((await call(app, "POST", "/book", { token, body: book })).status, 503);
  } finally {
    other.exec("ROLLBACK");
    other.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.match(
    await metrics.registry.metrics(),
    /book_catalogue_store_errors_total\{kind="unavailable"\} 1/,
  );
});

test("METRICS_PORT serves /metrics on a port of its own; the API port does not", async () => {
  const free = createServer();
  await new Promise<void>((resolve) => free.listen(0, "127.0.0.1", resolve));
  const metricsPort = (free.address() as { port: number }).port;
  await new Promise((resolve) => free.close(resolve));
  const service = await startService(
    { HOST: "127.0.0.1", PORT: "0", DB_URL: "sqlite::memory:", METRICS_PORT: String(metricsPort) },
    { direct: true },
  );
  try {
    await fetch(`${service.url}/health`);
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain/);
    const text = await response.text();
    assert.match(
      text,
      /book_catalogue_http_requests_total\{method="GET",route="\/health",status="200"\} 1/,
    );
    assert.match(text, /nodejs_heap_size_used_bytes/);
    assert.equal((await fetch(`${service.url}/metrics`)).status, 404);
  } finally {
    assert.equal(await service.stop(), 0);
  }
});

/** A port free on every interface at the time of asking. */
async function freePort(): Promise<number> {
  const free = createServer();
  await new Promise<void>((resolve) => free.listen(0, "0.0.0.0", resolve));
  const { port } = free.address() as { port: number };
  await new Promise((resolve) => free.close(resolve));
  return port;
}

/** Whether something answers GET /metrics at this address; false when the connection fails. */
async function metricsAt(host: string, port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://${host}:${port}/metrics`);
    await response.text();
    return response.status === 200;
  } catch {
    return false;
  }
}

// 127.0.0.2 is another address of this machine (all of 127/8 is loopback on Linux): a
// listener on every interface answers there, one on 127.0.0.1 does not.
const otherAddress = process.platform === "linux" ? false : "uses 127.0.0.2 (Linux loopback)";

test("metrics listen on 127.0.0.1 even when the API listens on every interface; METRICS_HOST widens it", {
  skip: otherAddress,
}, async () => {
  for (const metricsHost of [undefined, "0.0.0.0"]) {
    const metricsPort = await freePort();
    const service = await startService(
      {
        HOST: "0.0.0.0",
        PORT: "0",
        DB_URL: "sqlite::memory:",
        METRICS_PORT: String(metricsPort),
        ...(metricsHost ? { METRICS_HOST: metricsHost } : {}),
      },
      { direct: true },
    );
    try {
      const apiPort = new URL(service.url).port;
      assert.equal((await fetch(`http://127.0.0.2:${apiPort}/health`)).status, 200);
      assert.equal(await metricsAt("127.0.0.1", metricsPort), true);
      assert.equal(await metricsAt("127.0.0.2", metricsPort), metricsHost === "0.0.0.0");
    } finally {
      assert.equal(await service.stop(), 0);
    }
  }
});
