// decisions.md "Everything else": 404, 405, 413, 503, 500, health and readiness, and logs.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  call,
  captureLogs,
  storesUnderTest,
  TEST_PASSWORD,
  TEST_SECRET,
  tokenFor,
} from "../support/helpers.js";
import { pgConnect } from "../support/pg.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };
const envelope = (status: number, message: string) => ({ status, message, data: null });

describe("routes and limits", () => {
  let app: App;
  let token: string;
  before(async () => {
    app = await buildTestApp();
    token = await tokenFor(app);
  });
  after(() => app.close());

  for (const url of ["/", "/nope", "/book/1/extra", "/bookz", "/token/x", "/BOOKS"]) {
    test(`404 Not found in the envelope for the unknown path ${url}`, async () => {
      const answer = await call(app, "GET", url, { token });
      assert.equal(answer.status, 404);
      assert.deepEqual(answer.body, envelope(404, Messages.notFound));
      assert.match(String(answer.headers["content-type"]), /^application\/json/);
    });
  }

  const wrongMethods: [string, string, string][] = [
    ["GET", "/token", "POST"],
    ["DELETE", "/books", "GET, HEAD"],
    ["GET", "/book", "POST"],
    ["PATCH", "/book/1", "DELETE, GET, HEAD, PUT"],
    ["POST", "/book/1", "DELETE, GET, HEAD, PUT"],
    ["POST", "/health", "GET, HEAD"],
    ["PUT", "/books/", "GET, HEAD"],
  ];
  for (const [method, url, allow] of wrongMethods) {
    test(`405 Method not allowed with Allow: ${allow} for ${method} ${url}`, async () => {
      const answer = await call(app, method, url, { token });
      assert.equal(answer.status, 405);
      assert.deepEqual(answer.body, envelope(405, Messages.methodNotAllowed));
      assert.equal(answer.headers.allow, allow);
    });
  }

  test("413 Payload too large past the 64 KiB default, on book and token routes", async () => {
    const big = JSON.stringify({ ...DUNE, filler: "x".repeat(64 * 1024) });
    const book = await call(app, "POST", "/book", { token, payload: big });
    assert.deepEqual(book.body, envelope(413, Messages.payloadTooLarge));
    const login = await call(app, "POST", "/token", { payload: big });
    assert.deepEqual(login.body, envelope(413, Messages.payloadTooLarge));
  });

  test("a body just under the limit is read", async () => {
    const payload = JSON.stringify({ ...DUNE, filler: "x".repeat(60 * 1024) });
    assert.equal((await call(app, "POST", "/book", { token, payload })).status, 201);
  });

  test("BODY_LIMIT_BYTES sets the limit", async () => {
    const small = await buildTestApp({ env: { BODY_LIMIT_BYTES: "1024" } });
    const smallToken = await tokenFor(small);
    const payload = JSON.stringify({ ...DUNE, filler: "x".repeat(1100) });
    const answer = await call(small, "POST", "/book", { token: smallToken, payload });
    await small.close();
    assert.equal(answer.status, 413);
  });

  test("a URL that cannot be decoded is 400 Bad request in the envelope", async () => {
    const answer = await call(app, "GET", "/book/%E0%A4%A", { token });
    assert.deepEqual(answer.body, envelope(400, Messages.badRequest));
  });

  test("HEAD works wherever GET does, with no body", async () => {
    for (const url of ["/health", "/books", "/book/abc"]) {
      const response = await app.inject({ method: "HEAD", url, headers: { authorization: token } });
      assert.equal(response.statusCode, url === "/book/abc" ? 404 : 200, url);
      assert.equal(response.body, "");
    }
  });

  test("GET /health answers 200 OK and the version without a token", async () => {
    const answer = await call(app, "GET", "/health");
    const packageJson = new URL("../../package.json", import.meta.url);
    const { version } = JSON.parse(readFileSync(packageJson, "utf8"));
    assert.deepEqual(answer.body, { ...envelope(200, Messages.healthy), data: { version } });
  });

  test("GET /ready answers 503 once shutdown has begun", async () => {
    const closing = await buildTestApp();
    assert.equal((await call(closing, "GET", "/ready")).status, 200);
    closing.beginShutdown();
    const answer = await call(closing, "GET", "/ready");
    assert.deepEqual(answer.body, envelope(503, Messages.serviceUnavailable));
    await closing.close();
  });
});

describe("request ids", () => {
  test("X-Request-Id is sent back when well-formed, replaced by a fresh UUID otherwise", async () => {
    const app = await buildTestApp();
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const echoed = await call(app, "GET", "/health", {
      headers: { "x-request-id": "trace-42.a:b" },
    });
    assert.equal(echoed.headers["x-request-id"], "trace-42.a:b");
    const fresh = [await call(app, "GET", "/health"), await call(app, "GET", "/nope")];
    for (const answer of fresh) assert.match(String(answer.headers["x-request-id"]), uuid);
    assert.notEqual(fresh[0]?.headers["x-request-id"], fresh[1]?.headers["x-request-id"]);
    for (const bad of ["a b", "x".repeat(129), '"}', "ünï"]) {
      const answer = await app.inject({
        method: "GET",
        url: "/health",
        headers: { "x-request-id": bad },
      });
      assert.match(String(answer.headers["x-request-id"]), uuid, bad);
    }
    await app.close();
  });
});

describe("logs", () => {
  test("one line per request, with method, url and status, and no password or token", async () => {
    const logs = captureLogs();
    const app = await buildTestApp({ logStream: logs.stream, env: { LOG_LEVEL: "info" } });
    const token = await tokenFor(app);
    await call(app, "GET", "/books", { token, headers: { "x-request-id": "req-under-test" } });
    await call(app, "GET", "/books", { token: `Bearer ${token}` });
    await call(app, "POST", "/token", { body: { username: "x", password: TEST_PASSWORD } });
    await app.close();

    const lines = logs
      .text()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const requests = lines.filter((line) => line.msg === "request");
    assert.deepEqual(
      requests.map((line) => [line.method, line.url, line.statusCode]),
      [
        ["POST", "/token", 200],
        ["GET", "/books", 200],
        ["GET", "/books", 200],
        ["POST", "/token", 401],
      ],
    );
    assert.equal(requests[1]?.reqId, "req-under-test");
    for (const secret of [token, TEST_PASSWORD, TEST_SECRET, token.split(".")[2] as string]) {
      assert.ok(!logs.text().includes(secret), "a secret reached the logs");
    }
  });
});

describe("the access log and URLs", () => {
  test("each line names the client's address: the peer's, or with TRUST_PROXY the forwarded one", async () => {
    const addresses = async (env: Record<string, string>) => {
      const logs = captureLogs();
      const app = await buildTestApp({
        logStream: logs.stream,
        env: { LOG_LEVEL: "info", ...env },
      });
      for (const forwarded of ["203.0.113.7", 'forged"}\\']) {
        await call(app, "GET", "/health", { headers: { "x-forwarded-for": forwarded } });
      }
      await app.close();
      return logs
        .text()
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .filter((line) => line.msg === "request")
        .map((line) => [line.url, line.ip]);
    };
    // app.inject's peer is 127.0.0.1; without TRUST_PROXY a forwarded address is ignored.
    assert.deepEqual(await addresses({}), [
      ["/health", "127.0.0.1"],
      ["/health", "127.0.0.1"],
    ]);
    assert.deepEqual(await addresses({ TRUST_PROXY: "127.0.0.1" }), [
      ["/health", "203.0.113.7"],
      // What a client wrote there cannot break the line out of its JSON.
      ["/health", 'forged"}\\'],
    ]);
  });

  test("a token in the query or the path never reaches the log; query values are left out", async () => {
    const logs = captureLogs();
    const app = await buildTestApp({ logStream: logs.stream, env: { LOG_LEVEL: "info" } });
    const token = await tokenFor(app);
    const refused = await call(app, "GET", `/books?limit=1&token=${token}`);
    assert.equal(refused.status, 401);
    await call(app, "GET", `/book/${token}`);
    await call(app, "GET", `/books?access_token=${encodeURIComponent(`Bearer ${token}`)}`);
    await call(app, "GET", `/books?${token}`);
    await call(app, "GET", "/books?q=private%20words&limit=2", { token });
    await app.close();

    const urls = logs
      .text()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg === "request")
      .map((line) => line.url);
    assert.deepEqual(urls, [
      "/token",
      "/books?limit&token",
      "/book/[redacted]",
      "/books?access_token",
      "/books?[redacted]",
      "/books?q&limit",
    ]);
    for (const secret of [token, ...token.split("."), "private"]) {
      assert.ok(!logs.text().includes(secret), `${secret.slice(0, 12)}… reached the logs`);
    }
  });
});

for (const kind of await storesUnderTest()) {
  describe(`store failures on ${kind.name}`, { skip: kind.skip }, () => {
    test("an unexpected store failure is 500 Internal server error, with no detail", async () => {
      // The table vanishes behind the service's back: a fault, not a client mistake.
      const dir = mkdtempSync(join(tmpdir(), "books-"));
      const opened =
        kind.name === "sqlite"
          ? { store: openSqliteStore(join(dir, "b.db")), dbUrl: "", dispose: async () => {} }
          : await kind.open();
      const app = await buildTestApp({ store: opened.store });
      const token = await tokenFor(app);
      if (kind.name === "sqlite") {
        const other = new DatabaseSync(join(dir, "b.db"));
        other.exec("DROP TABLE books");
        other.close();
      } else {
        const db = await pgConnect(opened.dbUrl);
        await db.sql`DROP TABLE books`;
        await db.end();
      }
      const answer = await call(app, "POST", "/book", { token, body: DUNE });
      assert.deepEqual(answer.body, envelope(500, Messages.internalError));
      assert.ok(!answer.raw.includes("books"), "no SQL detail in the answer");
      await app.close();
      await opened.store.close();
      await opened.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    test("a store that cannot be reached gives 503 Service unavailable", async () => {
      if (kind.name === "postgres") {
        // The pool is ended under the running app: every query fails to reach the server.
        const opened = await kind.open();
        const app = await buildTestApp({ store: opened.store });
        const token = await tokenFor(app);
        await opened.store.close();
        for (const [method, url] of [
          ["GET", "/books"],
          ["GET", "/book/1"],
          ["POST", "/book"],
          ["PUT", "/book/1"],
          ["DELETE", "/book/1"],
          ["GET", "/ready"],
        ] as const) {
          const answer = await call(app, method, url, { token, body: DUNE });
          assert.deepEqual(
            answer.body,
            envelope(503, Messages.serviceUnavailable),
            `${method} ${url}`,
          );
        }
        await app.close();
        await opened.dispose().catch(() => {});
        return;
      }
      // SQLite: another process holds the write lock past busy_timeout.
      const dir = mkdtempSync(join(tmpdir(), "books-"));
      const store = openSqliteStore(join(dir, "b.db"));
      const app = await buildTestApp({ store });
      const token = await tokenFor(app);
      const other = new DatabaseSync(join(dir, "b.db"));
      other.exec("BEGIN EXCLUSIVE");
      const answer = await call(app, "POST", "/book", { token, body: DUNE });
      other.exec("ROLLBACK");
      other.close();
      assert.deepEqual(answer.body, envelope(503, Messages.serviceUnavailable));
      assert.equal((await call(app, "POST", "/book", { token, body: DUNE })).status, 201);
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
  });
}

const postgres = (await storesUnderTest()).find((kind) => kind.name === "postgres");
describe("PostgreSQL without disk space (53100 disk_full)", { skip: postgres?.skip }, () => {
  test("writes answer 503 with Retry-After, reads go on, one line for the episode, back by itself", async () => {
    const opened = await (postgres as NonNullable<typeof postgres>).open();
    const logs = captureLogs();
    const app = await buildTestApp({
      store: opened.store,
      logStream: logs.stream,
      env: { LOG_LEVEL: "info" },
    });
    const token = await tokenFor(app);
    const kept = await call<{ id: number }>(app, "POST", "/book", { token, body: DUNE });
    const id = kept.body.data?.id;
    // PostgreSQL's own answer when a table or its WAL cannot grow, for every write.
    const db = await pgConnect(opened.dbUrl);
    await db.sql`CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'
        USING ERRCODE = 'disk_full'; END $$`;
    await db.sql`CREATE TRIGGER disk_full BEFORE INSERT OR UPDATE OR DELETE ON books
      FOR EACH ROW EXECUTE FUNCTION disk_full()`;
    for (let round = 0; round < 3; round++) {
      for (const [method, url] of [
        ["POST", "/book"],
        ["PUT", `/book/${id}`],
        ["DELETE", `/book/${id}`],
      ] as const) {
        const answer = await call(app, method, url, { token, body: { ...DUNE, year: 2000 } });
        assert.deepEqual(answer.body, envelope(503, Messages.serviceUnavailable), method);
        assert.equal(answer.headers["retry-after"], "5", method);
      }
      assert.deepEqual(
        (await call(app, "GET", `/book/${id}`, { token })).body.data,
        kept.body.data,
      );
      assert.equal((await call(app, "GET", "/books", { token })).status, 200);
      assert.equal((await call(app, "GET", "/ready")).status, 200);
    }
    await db.sql`DROP TRIGGER disk_full ON books`;
    assert.equal((await call(app, "POST", "/book", { token, body: DUNE })).status, 201);
    assert.equal((await call(app, "PUT", `/book/${id}`, { token, body: DUNE })).status, 200);
    const lines = logs.text().split("\n");
    assert.equal(lines.filter((line) => line.includes("store full")).length, 1, logs.text());
    const end = lines.filter((line) => line.includes("store writes succeed again"));
    assert.equal(end.length, 1, logs.text());
    assert.equal(JSON.parse(end[0] as string).refused, 9);
    assert.ok(!logs.text().includes("unexpected failure"), "no line per refused write");
    await db.end();
    await app.close();
    await opened.store.close();
    await opened.dispose();
  });
});

describe("files missing under /docs", () => {
  let app: App;
  before(async () => {
    app = await buildTestApp();
  });
  after(() => app.close());

  for (const method of ["GET", "HEAD"] as const) {
    test(`${method} /docs/static/nonexistent.js: 404 Not found, not 405`, async () => {
      const response = await app.inject({ method, url: "/docs/static/nonexistent.js" });
      assert.equal(response.statusCode, 404);
      assert.equal(response.headers.allow, undefined);
      if (method === "GET") {
        assert.deepEqual(JSON.parse(response.body), {
          status: 404,
          message: Messages.notFound,
          data: null,
        });
      }
    });
  }

  test("another method on a docs file is still 405 with Allow", async () => {
    const response = await app.inject({ method: "POST", url: "/docs/static/swagger-ui.css" });
    assert.equal(response.statusCode, 405);
    assert.equal(response.headers.allow, "GET, HEAD");
  });
});
