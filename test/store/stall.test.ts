// A PostgreSQL that stalls (here a pgbouncer paused): every request that needs it answers 503
// within DB_TIMEOUT_SECONDS, /ready within its own bound, the rest as ever; and when the store
// answers again, requests succeed with no restart.
import assert from "node:assert/strict";
import { get } from "node:http";
import { test } from "node:test";
import { Messages } from "../../src/http/envelope.js";
import type { Book } from "../../src/rules/book.js";
import { describe } from "../support/describe.js";
import { freshPostgresDatabase, storesUnderTest, TEST_DB_PASSWORD } from "../support/helpers.js";
import { pgConnect } from "../support/pg.js";
import { pgbouncerSkipReason, startPgbouncer } from "../support/pgbouncer.js";
import { login, request, type Service, startService } from "../support/service.js";

const CREDENTIALS = { username: "stall", password: "stall-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: "stall-test-secret-of-at-least-32-bytes-long",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  DB_TIMEOUT_SECONDS: "1",
  DB_PREPARED_STATEMENTS: "false",
};

/** The answer's status and how long it took, in ms. */
async function timed(
  service: Service,
  method: string,
  path: string,
  token?: string,
  body?: object,
) {
  const started = Date.now();
  const answer = await request(service, method, path, token, body);
  return { ...answer, ms: Date.now() - started };
}

/** The service on a database of its own, through a pgbouncer in transaction mode. */
async function serviceBehindPgbouncer() {
  const pgbouncer = await startPgbouncer({ poolMode: "transaction" });
  const database = await freshPostgresDatabase();
  const url = new URL(pgbouncer.url(database.name));
  url.password = TEST_DB_PASSWORD;
  const service = await startService({ ...ENV, DB_URL: url.toString() }, { direct: true }).catch(
    async (error) => {
      // Neither the pooler nor the database may outlive a service that never started.
      await pgbouncer.stop();
      await database.drop();
      throw error;
    },
  );
  const stop = async () => {
    await service.stop();
    await pgbouncer.stop();
    await database.drop();
  };
  return { pgbouncer, database, service, stop };
}

const postgres = (await storesUnderTest()).find((k) => k.name === "postgres");
const skip = postgres?.skip || pgbouncerSkipReason();

describe("PostgreSQL stalls behind a paused pgbouncer", { skip }, () => {
  test("503 within the bound, /ready 503 within 2 s, /health and logins unharmed, then back by itself", async () => {
    const { pgbouncer, database, service, stop } = await serviceBehindPgbouncer();
    try {
      const token = await login(service, CREDENTIALS);
      const book = { title: "Before the stall", author: "A", year: 1 };
      const created = await request<Book>(service, "POST", "/book", token, book);
      assert.equal(created.status, 201);
      const id = (created.body.data as Book).id;

      await pgbouncer.pause(database.name);
      const answers = await Promise.all([
        timed(service, "GET", `/book/${id}`, token),
        timed(service, "GET", "/books", token),
        timed(service, "POST", "/book", token, book),
        timed(service, "PUT", `/book/${id}`, token, { year: 2 }),
        timed(service, "GET", "/ready"),
      ]);
      for (const [i, answer] of answers.entries()) {
        assert.equal(answer.status, 503, `request ${i}`);
        assert.equal(answer.body.message, Messages.serviceUnavailable);
        // The bound (1 s, /ready 2 s), and room for a busy machine; never the stall's length.
        assert.ok(answer.ms < 4_000, `request ${i} took ${answer.ms} ms`);
      }
      const health = await timed(service, "GET", "/health");
      assert.equal(health.status, 200);
      assert.ok(health.ms < 1_000);
      assert.equal((await timed(service, "POST", "/token", undefined, CREDENTIALS)).status, 200);

      await pgbouncer.resume(database.name);
      const deadline = Date.now() + 10_000;
      while ((await request(service, "GET", "/ready")).status !== 200) {
        assert.ok(Date.now() < deadline, "not ready 10 s after the store came back");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const read = await request<Book>(service, "GET", `/book/${id}`, token);
      assert.equal(read.status, 200);
      assert.equal(read.body.data?.title, "Before the stall");
      assert.equal((await request(service, "POST", "/book", token, book)).status, 201);
      assert.equal(service.process.exitCode, null);
    } finally {
      await stop();
    }
  });

  test("a listing already streaming when the store stalls ends within the bound, and the log says why", async () => {
    const { pgbouncer, database, service, stop } = await serviceBehindPgbouncer();
    try {
      const token = await login(service, CREDENTIALS);
      // Far more than the sockets between them hold: the answer must wait on the store.
      const db = await pgConnect(database.url);
      await db.sql`INSERT INTO books (title, author, year)
        SELECT 'Book ' || i, 'Author', 2000 FROM generate_series(1, 200000) AS i`;
      await db.end();
      const ended = await new Promise<{ how: string; ms: number; bytes: number }>((resolve) => {
        let bytes = 0;
        let paused = 0;
        const finish = (how: string) => resolve({ how, ms: Date.now() - paused, bytes });
        get(`${service.url}/books`, { headers: { authorization: token } }, (response) => {
          response.once("data", (chunk: Buffer) => {
            bytes += chunk.length;
            response.pause();
            void pgbouncer.pause(database.name).then(() => {
              paused = Date.now();
              response.on("data", (more: Buffer) => {
                bytes += more.length;
              });
              response.resume();
            });
          });
          response.once("end", () => finish("end"));
          response.once("error", () => finish("error"));
          response.once("aborted", () => finish("aborted"));
        });
      });
      assert.notEqual(ended.how, "end", "the answer ended as if whole");
      assert.ok(ended.ms < 4_000, `the cut came ${ended.ms} ms after the stall`);
      // Log lines are written asynchronously: the line may come just after the cut.
      const logged = /"msg":"listing cut off: the store failed while it streamed"/;
      const logDeadline = Date.now() + 5_000;
      while (!logged.test(service.output())) {
        assert.ok(Date.now() < logDeadline, `no line says why:\n${service.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await pgbouncer.resume(database.name);
      const deadline = Date.now() + 10_000;
      while ((await request(service, "GET", "/books?limit=1", token)).status !== 200) {
        assert.ok(Date.now() < deadline, "listings did not come back");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await stop();
    }
  });
});
