// The end of a process: a drain behind a balancer, and an error nobody handled.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { describe } from "../support/describe.js";
import { killIfAlive, request, startService } from "../support/service.js";

const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  NODE_ENV: "production",
  DB_URL: "sqlite::memory:",
  SECRET_TOKEN: "lifecycle-secret-of-more-than-32-bytes",
  AUTH_USERNAME: "librarian",
  AUTH_PASSWORD: "lifecycle-password",
};

describe("SHUTDOWN_DRAIN_SECONDS", () => {
  test("after SIGTERM /ready answers 503 while requests are still served, then the process exits 0", async () => {
    const service = await startService({ ...ENV, SHUTDOWN_DRAIN_SECONDS: "2" }, { direct: true });
    const signalled = Date.now();
    const exited = service.stop("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    // A balancer's check sees the instance going, while the port still takes its requests.
    assert.equal((await request(service, "GET", "/ready")).status, 503);
    assert.equal((await request(service, "GET", "/health")).status, 200);
    assert.equal(
      (await request(service, "POST", "/token", undefined, { username: "x", password: "y" }))
        .status,
      401,
    );
    assert.equal(await exited, 0);
    assert.ok(Date.now() - signalled >= 2_000, "the port closed before the drain ended");
    assert.match(service.output(), /"drainMs":2000,"msg":"shutting down"/);
  });
});

describe("Ctrl-C at a terminal", () => {
  for (const workers of ["1", "2"]) {
    test(`npm start with WORKERS=${workers}: SIGINT to the group, twice, drains and exits 0`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "ctrl-c-"));
      const temporary = join(dir, "tmp");
      mkdirSync(temporary);
      let group: number | undefined;
      try {
        const service = await startService(
          {
            ...ENV,
            DB_URL: `sqlite:${join(dir, "books.db")}`,
            TMPDIR: temporary,
            WORKERS: workers,
            SHUTDOWN_DRAIN_SECONDS: "1",
          },
          { ownGroup: true },
        );
        const exited = new Promise((resolve) => service.process.once("exit", resolve));
        // The terminal signals npm and the server alike, and npm passes its SIGINT on: the
        // server gets two, or more as a user presses again, and none may cut the drain short.
        group = -(service.process.pid as number);
        process.kill(group, "SIGINT");
        await new Promise((resolve) => setTimeout(resolve, 150));
        process.kill(group, "SIGINT");
        await new Promise((resolve) => setTimeout(resolve, 150));
        assert.equal((await request(service, "GET", "/ready")).status, 503);
        assert.equal(await exited, 0);
        assert.match(service.output(), /"msg":"stopped"/);
        const left = readdirSync(temporary).filter((name) => name.startsWith("book-catalogue-"));
        assert.deepEqual(left, [], "the writer's folder is removed");
      } finally {
        // Whatever failed, no server of the group is left running.
        if (group !== undefined) killIfAlive(group);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe("an error nobody handled", () => {
  for (const [what, code] of [
    ["unhandled rejection", "Promise.reject(new Error('nobody-caught-this'))"],
    ["uncaught exception", "setImmediate(() => { throw new Error('nobody-caught-this'); })"],
  ] as const) {
    test(`${what}: logged with its stack as one fatal line, and the process exits 1`, async () => {
      // Code run in the server process at its first request, as a defect in a dependency
      // would: not at a time, which a slow start could reach before it listens.
      const atFirstRequest = `import http from "node:http";
        const emit = http.Server.prototype.emit;
        http.Server.prototype.emit = function (event, ...args) {
          if (event === "request") setImmediate(() => { ${code}; });
          return emit.call(this, event, ...args);
        };`;
      const inject = `data:text/javascript,${encodeURIComponent(atFirstRequest)}`;
      const service = await startService(ENV, { nodeArgs: ["--import", inject] });
      const exited = new Promise<number | null>((resolve) =>
        service.process.once("exit", (exitCode) => resolve(exitCode)),
      );
      await request(service, "GET", "/health").catch(() => undefined);
      const code1 = await exited;
      assert.equal(code1, 1);
      const fatal = service
        .output()
        .split("\n")
        .filter((line) => line.includes('"level":60'))
        .map(
          (line) => JSON.parse(line) as { msg: string; err: { message: string; stack: string } },
        );
      assert.equal(fatal.length, 1, service.output());
      assert.equal(fatal[0]?.msg, `${what}: exiting, to be started again`);
      assert.equal(fatal[0]?.err.message, "nobody-caught-this");
      assert.match(fatal[0]?.err.stack ?? "", /Error: nobody-caught-this\n\s+at /);
    });
  }
});
