// A log that cannot be written costs lines, never a request or a shutdown: standard output on a
// full disk (/dev/full answers every write with ENOSPC) or a pipe whose reader is gone.
import assert from "node:assert/strict";
import { once } from "node:events";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout } from "node:timers/promises";
import { droppedLogLines, openLogDestination } from "../../src/http/log-destination.js";
import { describe } from "../support/describe.js";
import { answered, type ServerWithOutput, startWithOutput } from "../support/service.js";

const ENV = {
  HOST: "127.0.0.1",
  NODE_ENV: "production",
  DB_URL: "sqlite::memory:",
  SECRET_TOKEN: "log-destination-secret-of-more-than-32-bytes",
  AUTH_USERNAME: "librarian",
  AUTH_PASSWORD: "log-destination-password",
  LOG_LEVEL: "info",
  SHUTDOWN_TIMEOUT_SECONDS: "2",
};
/** SHUTDOWN_TIMEOUT_SECONDS, the last log lines' moment, and room for a busy machine. */
const EXIT_BOUND_MS = 2_000 + 1_000 + 3_000;

const line = (n: number) => `${JSON.stringify({ level: 30, msg: `line ${n}`.padEnd(40) })}\n`;

describe("the log destination", () => {
  test("on a full disk: writes never throw nor wait, lines are dropped and counted", async () => {
    const fd = openSync("/dev/full", "w");
    try {
      const log = openLogDestination(fd);
      const before = droppedLogLines();
      for (let n = 0; n < 1000; n++) log.write(line(n));
      await log.drain(5_000);
      assert.equal(droppedLogLines() - before, 1000);
    } finally {
      closeSync(fd);
    }
  });

  test("past its bound, lines are dropped, and one line says how many once it writes again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "log-destination-"));
    const fd = openSync(join(dir, "log"), "w");
    try {
      // One line in flight, two waiting (61 bytes each, of 150), the other seven dropped.
      const log = openLogDestination(fd, 150);
      for (let n = 0; n < 10; n++) log.write(line(n));
      await log.drain(5_000);
      const lines = readFileSync(join(dir, "log"), "utf8").trim().split("\n");
      const parsed = lines.map((text) => JSON.parse(text) as { msg: string; dropped?: number });
      assert.deepEqual(
        parsed.map(({ msg, dropped }) => (dropped === undefined ? msg.trim() : dropped)),
        ["line 0", 7, "line 1", "line 2"],
      );
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true });
    }
  });
});

/**
 * 200 requests that log, each answered within a second; then SIGTERM ends the process. A
 * failing check kills it: no server outlives the test.
 */
async function servesThenStops(server: ServerWithOutput) {
  try {
    await servesThenStopsOrThrows(server);
  } catch (error) {
    server.child.kill("SIGKILL");
    throw error;
  }
}

async function servesThenStopsOrThrows(server: ServerWithOutput) {
  const login = JSON.stringify({ username: "librarian", password: "log-destination-password" });
  for (let n = 0; n < 100; n++) {
    assert.equal(await answered(`${server.url}/health`), 200, `request ${n}`);
    const token = await answered(`${server.url}/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: login,
    });
    assert.equal(token, 200, `login ${n}`);
  }
  // Each request's access line, at least, is dropped and counted (a failed write is counted
  // when it returns, so the last few may take a moment).
  let dropped = 0;
  for (let tries = 0; tries < 20 && dropped < 200; tries++) {
    if (tries > 0) await setTimeout(100);
    const text = await (await fetch(server.metrics)).text();
    dropped = Number(/^book_catalogue_log_lines_dropped_total (\d+)$/m.exec(text)?.[1]);
  }
  assert.ok(dropped >= 200, `dropped: ${dropped}`);
  const signalled = Date.now();
  server.child.kill("SIGTERM");
  const timer = globalThis.setTimeout(() => server.child.kill("SIGKILL"), EXIT_BOUND_MS);
  const code = await server.exited;
  clearTimeout(timer);
  assert.equal(code, 0, `exited ${code} after ${Date.now() - signalled} ms\n${server.output()}`);
}

describe("the service with its log unwritable", () => {
  test("standard output on a full disk: every request answered, SIGTERM exits 0", async () => {
    const fd = openSync("/dev/full", "w");
    try {
      await servesThenStops(await startWithOutput(ENV, fd));
    } finally {
      closeSync(fd);
    }
  });

  test("standard output a pipe whose reader has gone: every request answered, SIGTERM exits 0", async () => {
    const server = await startWithOutput(ENV, "pipe");
    // As `| head -c 300` does: read a little, then close the pipe.
    const stdout = server.child.stdout;
    assert.ok(stdout);
    stdout.destroy();
    // Once our end is closed, every write the child makes fails with EPIPE.
    await once(stdout, "close");
    await servesThenStops(server);
  });
});
