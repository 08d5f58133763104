// Bad input never gets a 500 or a crash: a property-based fuzzer over every route, named
// hostile bodies, and requests that break HTTP itself, sent over a real socket.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import fc from "fast-check";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call, listenLocally, tokenFor } from "../support/helpers.js";
import {
  assertLoopNeverHeld,
  LOOP_DELAY_LIMIT_MS,
  type LoopRecord,
  startLoopRecord,
} from "../support/loop-delay.js";

// Every status the contract or decisions.md lets a request earn without a store fault.
const ALLOWED = new Set([200, 201, 400, 401, 404, 405, 413, 429]);
const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 3000);

// The service under attack runs in this process, so its event loop is the one recorded. Each
// suite records while its requests are served, not while its app is built; the last test
// reads them all. The fuzzer's own work shares the loop, which can only make the figures worse.
const loopRecords: LoopRecord[] = [];
const recordLoopDelay = (suite: string) => startLoopRecord(suite, loopRecords);

describe("fuzzing every route", () => {
  let app: App;
  let stopRecording = () => {};
  let token: string;
  before(async () => {
    app = await buildTestApp({ env: { LOGIN_MAX_FAILURES: "1000000" } });
    token = await tokenFor(app);
    stopRecording = recordLoopDelay("fuzzing");
  });
  after(() => {
    stopRecording();
    return app.close();
  });

  test(`${FUZZ_RUNS} random and mutated requests: always an envelope with an allowed status`, async () => {
    const book = fc.record(
      {
        title: fc.oneof(fc.string(), fc.constant("Dune"), fc.jsonValue()),
        author: fc.oneof(fc.string(), fc.constant("Herbert"), fc.jsonValue()),
        year: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(1965), fc.jsonValue()),
        id: fc.jsonValue(),
        __proto__: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      book.map((value) => JSON.stringify(value)),
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc.string(),
      fc.constant(""),
      fc.constant('{"username":"admin","password":"password"}'),
      fc.constant('{"__proto__":{"admin":true},"title":"x","author":"y","year":1}'),
    );
    const id = fc.oneof(
      fc.integer({ min: -5, max: 2_000 }).map(String),
      fc.bigInt().map(String),
      fc.string().map(encodeURIComponent),
      fc.constantFrom("0", "01", "1e3", "true", "%2F", "..", "1.5", "9007199254740993"),
    );
    const path = fc.oneof(
      fc.constantFrom("/token", "/book", "/books", "/health", "/ready", "/", "/books/"),
      id.map((value) => `/book/${value}`),
      fc
        .array(fc.string().map(encodeURIComponent), { maxLength: 4 })
        .map((parts) => `/${parts.join("/")}`),
    );
    const authorization = fc.oneof(
      fc.constant(token),
      fc.constant(`Bearer ${token}`),
      fc.constant(undefined),
      fc.string(),
      fc.constant(`${token}x`),
    );
    const contentType = fc.constantFrom(
      "application/json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      undefined,
    );
    const method = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD");

    await fc.assert(
      fc.asyncProperty(
        method,
        path,
        body,
        authorization,
        contentType,
        async (m, p, b, auth, type) => {
          const headers: Record<string, string> = {};
          if (auth !== undefined) headers.authorization = auth;
          if (type !== undefined) headers["content-type"] = type;
          const sendsBody = m !== "GET" && m !== "HEAD";
          const response = await app.inject({
            method: m,
            url: p,
            headers,
            ...(sendsBody ? { payload: b } : {}),
          });
          assert.ok(ALLOWED.has(response.statusCode), `${m} ${p} answered ${response.statusCode}`);
          if (m === "HEAD") return;
          const envelope = JSON.parse(response.body);
          assert.deepEqual(Object.keys(envelope).sort(), ["data", "message", "status"]);
          assert.equal(envelope.status, response.statusCode);
          if (response.statusCode >= 400) assert.equal(envelope.data, null);
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
    assert.equal((await call(app, "GET", "/health")).status, 200);
    assert.equal((await call(app, "GET", "/books", { token })).status, 200);
  });
});

describe("named hostile bodies", () => {
  let app: App;
  let stopRecording = () => {};
  let token: string;
  before(async () => {
    // Room for 100,000 levels of nesting within the limit.
    app = await buildTestApp({ env: { BODY_LIMIT_BYTES: String(256 * 1024) } });
    token = await tokenFor(app);
    stopRecording = recordLoopDelay("named hostile bodies");
  });
  after(() => {
    stopRecording();
    return app.close();
  });

  const invalid = (answer: { status: number; body: unknown }, message: string) =>
    assert.deepEqual(answer.body, { status: 400, message, data: null });

  test("100,000 levels of nesting: 400, and the service goes on", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    invalid(await call(app, "POST", "/book", { token, payload: deep }), Messages.invalidInput);
    invalid(await call(app, "POST", "/token", { payload: deep }), Messages.invalidRequestPayload);
    const deepObject = `{"title":${'{"a":'.repeat(40_000)}1${"}".repeat(40_000)},"author":"A","year":1}`;
    invalid(
      await call(app, "POST", "/book", { token, payload: deepObject }),
      Messages.invalidInput,
    );
    assert.equal((await call(app, "GET", "/health")).status, 200);
  });

  test("huge numbers: 400 as a year, 404 as an id", async () => {
    for (const year of ["1e308", "-1e400", "1e400", "123456789012345678901234567890"]) {
      const payload = `{"title":"T","author":"A","year":${year}}`;
      invalid(await call(app, "POST", "/book", { token, payload }), Messages.invalidInput);
    }
    const answer = await call(app, "GET", `/book/${"9".repeat(400)}`, { token });
    assert.equal(answer.status, 404);
  });

  test("duplicate keys: the last one counts, as in JSON.parse", async () => {
    const payload = '{"title":"First","title":"Second","author":"A","year":1,"year":2}';
    const answer = await call<{ title: string; year: number }>(app, "POST", "/book", {
      token,
      payload,
    });
    assert.equal(answer.status, 201);
    assert.equal(answer.body.data?.title, "Second");
    assert.equal(answer.body.data?.year, 2);
  });

  test("strings with NUL, lone surrogates or only whitespace in every field: 400", async () => {
    for (const bad of ['"\\u0000"', '"\\udc00"', '"\\ud800x"', '"\\u2003\\u00a0 "']) {
      for (const field of ["title", "author"]) {
        const payload = `{"title":"T","author":"A","year":1,"${field}":${bad}}`;
        invalid(await call(app, "POST", "/book", { token, payload }), Messages.invalidInput);
      }
    }
  });
});

/** Writes raw bytes to the service and collects what comes back until it closes. */
function raw(port: number, data: string, options: { keepOpenMs?: number } = {}) {
  return new Promise<{ text: string; closedAfterMs: number }>((resolve, reject) => {
    const started = performance.now();
    let text = "";
    const socket = connect(port, "127.0.0.1", () => socket.write(data));
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve({ text, closedAfterMs: performance.now() - started }));
    if (options.keepOpenMs === undefined) socket.setTimeout(5000, () => socket.destroy());
  });
}

function envelopeOf(text: string): { status: number; message: string; data: unknown } {
  return JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
}

describe("requests that break HTTP, over a real socket", () => {
  let app: App;
  let stopRecording = () => {};
  let port: number;
  before(async () => {
    app = await buildTestApp({
      env: { HEADERS_TIMEOUT_SECONDS: "1", REQUEST_TIMEOUT_SECONDS: "2" },
    });
    port = Number(new URL(await listenLocally(app)).port);
    stopRecording = recordLoopDelay("requests that break HTTP");
  });
  after(() => {
    stopRecording();
    return app.close();
  });

  test("Content-Length with Transfer-Encoding: 400 in the envelope", async () => {
    const { text } = await raw(
      port,
      "POST /token HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    );
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.deepEqual(envelopeOf(text), { status: 400, message: Messages.badRequest, data: null });
  });

  test("a chunked body past the limit: 413 in the envelope", async () => {
    const chunk = "x".repeat(16 * 1024);
    const chunks = Array.from({ length: 6 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const { text } = await raw(
      port,
      `POST /token HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks.join("")}0\r\n\r\n`,
    );
    assert.match(text, /^HTTP\/1\.1 413 /);
    assert.deepEqual(envelopeOf(text), {
      status: 413,
      message: Messages.payloadTooLarge,
      data: null,
    });
  });

  test("a URL over 16 KiB: 431 in the envelope", async () => {
    const { text } = await raw(port, `GET /${"a".repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(text, /^HTTP\/1\.1 431 /);
    assert.deepEqual(envelopeOf(text), {
      status: 431,
      message: Messages.headersTooLarge,
      data: null,
    });
  });

  test("a malformed request line: 400 in the envelope", async () => {
    const { text } = await raw(port, "GARBAGE\r\n\r\n");
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.equal(envelopeOf(text).message, Messages.badRequest);
  });

  test("a URL with raw non-ASCII bytes: 400 Bad request, and Problem-Reason says to encode them", async () => {
    for (const target of ["/books?q=Garc\u00eda", "/book/\u0661", "/b\u00fccher"]) {
      const { text } = await raw(port, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.match(text, /^HTTP\/1\.1 400 /);
      assert.deepEqual(envelopeOf(text), { status: 400, message: Messages.badRequest, data: null });
      assert.match(
        text,
        /\r\nproblem-reason: URL: characters outside printable ASCII must be percent-encoded\r\n/i,
      );
    }
  });

  test("a request target that is no path: 400 Bad request, and Problem-Reason says what one is", async () => {
    // After a request whose body holds UTF-8, on the same connection, too.
    const before = 'POST /token HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n"\u00e9\u00e9"';
    for (const sent of [
      "GET books HTTP/1.1\r\nHost: x\r\n\r\n",
      `${before}GET books HTTP/1.1\r\n\r\n`,
    ]) {
      const { text } = await raw(port, sent);
      assert.match(
        text,
        /\r\nproblem-reason: URL: a path starting with \/ \(or an absolute URL\)\r\n/i,
      );
      assert.deepEqual(envelopeOf(text.slice(text.lastIndexOf("HTTP/1.1 400"))), {
        status: 400,
        message: Messages.badRequest,
        data: null,
      });
    }
  });

  test("clients that never finish headers or body are cut off; others stay fast", async () => {
    const slowHeaders = raw(port, "GET /health HTTP/1.1\r\nHost: x\r\n", { keepOpenMs: 0 });
    const slowBody = raw(
      port,
      'POST /token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"us',
      { keepOpenMs: 0 },
    );
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      assert.equal(response.status, 200);
      await response.text();
      waits.push(performance.now() - started);
    }
    const headers = await slowHeaders;
    const body = await slowBody;
    // Checked once the slow clients are done: failing earlier would leave them open, and the
    // server's close would wait for them.
    assert.ok(
      waits.every((ms) => ms < 500),
      `another client waited: ${waits.map(Math.round).join(", ")} ms`,
    );
    assert.ok(headers.closedAfterMs < 4000, `headers: closed after ${headers.closedAfterMs} ms`);
    assert.ok(body.closedAfterMs < 5000, `body: closed after ${body.closedAfterMs} ms`);
    assert.match(headers.text, /^HTTP\/1\.1 408 /);
    assert.equal(envelopeOf(headers.text).message, Messages.requestTimeout);
  });
});

test(`no request held the event loop for ${LOOP_DELAY_LIMIT_MS} ms or more`, (t) => {
  assert.equal(loopRecords.length, 3);
  for (const record of loopRecords) assertLoopNeverHeld(t, record);
});
