// Security headers on every answer, and the docs page's policy.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  call,
  listenLocally,
  TEST_PASSWORD,
  TEST_USERNAME,
  tokenFor,
} from "../support/helpers.js";

describe("security headers", () => {
  let app: App;
  let token: string;
  before(async () => {
    app = await buildTestApp();
    token = await tokenFor(app);
  });
  after(() => app.close());

  const answers: [string, string][] = [
    ["GET", "/health"],
    ["GET", "/books"],
    ["GET", "/nope"],
    ["DELETE", "/books"],
    ["POST", "/token"],
    ["GET", "/openapi.json"],
    ["GET", "/docs"],
    ["GET", "/docs/"],
    ["GET", "/docs/static/swagger-ui.css"],
    ["GET", "/docs/static/swagger-ui-bundle.js"],
    ["GET", "/docs/static/swagger-initializer.js"],
    ["GET", "/docs/json"],
  ];
  for (const [method, url] of answers) {
    test(`X-Content-Type-Options: nosniff on ${method} ${url}`, async () => {
      const response = await app.inject({ method: method as "GET", url });
      assert.equal(response.headers["x-content-type-options"], "nosniff");
    });
  }

  test("nosniff on a book route's answers too", async () => {
    const answer = await call(app, "GET", "/books", { token });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers["x-content-type-options"], "nosniff");
  });

  test("Cache-Control: no-store on a token and on every answer that carries books", async () => {
    const login = await app.inject({
      method: "POST",
      url: "/token",
      payload: { username: TEST_USERNAME, password: TEST_PASSWORD },
    });
    assert.equal(login.statusCode, 200);
    assert.equal(login.headers["cache-control"], "no-store");
    const book = { title: "Kept by no cache", author: "A. Author", year: 2001 };
    const created = await call<{ id: number }>(app, "POST", "/book", { token, body: book });
    assert.equal(created.status, 201);
    const id = created.body.data?.id;
    const send = (method: string, url: string) =>
      app.inject({ method: method as "GET", url, headers: { authorization: token } });
    const answers = [
      created,
      await send("GET", "/books"),
      await send("HEAD", "/books"),
      await send("GET", `/book/${id}`),
      await call(app, "PUT", `/book/${id}`, { token, body: { ...book, year: 2002 } }),
      await app.inject({ method: "GET", url: "/books" }),
      await send("DELETE", `/book/${id}`),
    ];
    const statuses = answers.map((answer) =>
      "status" in answer ? answer.status : answer.statusCode,
    );
    assert.deepEqual(statuses, [201, 200, 200, 200, 200, 401, 200]);
    for (const answer of answers) assert.equal(answer.headers["cache-control"], "no-store");
  });

  test("the page and the docs' files keep their own caching", async () => {
    const response = await app.inject({ method: "GET", url: "/docs/static/swagger-ui.css" });
    assert.notEqual(response.headers["cache-control"], "no-store");
  });

  for (const url of ["/docs", "/docs/"]) {
    test(`${url}: a CSP that no site may frame, with nothing inline allowed; no referrer`, async () => {
      const response = await app.inject({ method: "GET", url });
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers["content-type"]), /^text\/html/);
      const csp = String(response.headers["content-security-policy"]);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /default-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.equal(response.headers["referrer-policy"], "no-referrer");
    });
  }

  test("the Swagger UI page has no inline script that its CSP would have to allow", async () => {
    const html = (await app.inject({ method: "GET", url: "/docs" })).body;
    for (const script of html.match(/<script\b[^>]*>[\s\S]*?<\/script>/g) ?? []) {
      assert.match(script, /<script [^>]*src="/, `inline script: ${script}`);
      assert.match(script, />\s*<\/script>$/, `inline script: ${script}`);
    }
    assert.doesNotMatch(html, /<style\b|\sstyle="|\son[a-z]+="/i);
  });

  test("an answer to a request Node's parser refuses carries nosniff too", async () => {
    const other = await buildTestApp();
    const port = Number(new URL(await listenLocally(other)).port);
    try {
      const text = await new Promise<string>((resolve, reject) => {
        let received = "";
        const socket = connect(port, "127.0.0.1", () => socket.write("GARBAGE\r\n\r\n"));
        socket.setEncoding("utf8");
        socket.on("data", (chunk) => {
          received += chunk;
        });
        socket.on("error", reject);
        socket.on("close", () => resolve(received));
      });
      assert.match(text, /^HTTP\/1\.1 400 /);
      assert.match(text, /\r\nX-Content-Type-Options: nosniff\r\n/i);
    } finally {
      await other.close();
    }
  });

  test("HTTP/1.1 without Host: 400 Bad request in the envelope, with nosniff, and the connection closes", async () => {
    const other = await buildTestApp();
    const port = Number(new URL(await listenLocally(other)).port);
    try {
      const text = await rawExchange(port, "GET /books HTTP/1.1\r\n\r\n");
      const [head = "", body = ""] = text.split("\r\n\r\n");
      assert.match(head, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(head, /\r\nX-Content-Type-Options: nosniff\r\n/i);
      assert.match(head, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i);
      assert.match(head, /\r\nConnection: close\r\n/i);
      assert.deepEqual(JSON.parse(body), {
        status: 400,
        message: Messages.badRequest,
        data: null,
      });
      // HTTP/1.0 needs no Host: that request reaches the route (and its token check).
      assert.match(await rawExchange(port, "GET /books HTTP/1.0\r\n\r\n"), /^HTTP\/1\.1 401 /);
    } finally {
      await other.close();
    }
  });

  test("an Expect the service cannot meet is 417, and a CONNECT 400, in the envelope", async () => {
    const other = await buildTestApp();
    const port = Number(new URL(await listenLocally(other)).port);
    try {
      for (const [request, status, message] of [
        [
          "GET /books HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n",
          "417 Expectation Failed",
          Messages.expectationFailed,
        ],
        [
          "CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n",
          "400 Bad Request",
          Messages.badRequest,
        ],
      ] as const) {
        const [head = "", body = ""] = (await rawExchange(port, request)).split("\r\n\r\n");
        assert.match(head, new RegExp(`^HTTP/1\\.1 ${status}\r\n`), request);
        assert.match(head, /\r\nX-Content-Type-Options: nosniff\r\n/i);
        assert.match(head, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i);
        assert.deepEqual(JSON.parse(body), {
          status: Number.parseInt(status, 10),
          message,
          data: null,
        });
      }
      // Pipelined behind a request: that request's answer comes first, whole.
      const token = await tokenFor(other);
      const pipelined = await rawExchange(
        port,
        `GET /books HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\n\r\n` +
          "CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n",
      );
      assert.match(
        pipelined,
        /^HTTP\/1\.1 200 OK\r\n[\s\S]*"Books retrieved successfully"[^\r]*HTTP\/1\.1 400 Bad Request\r\n/,
      );
    } finally {
      await other.close();
    }
  });
});

/** Sends `text` on a new connection and resolves with all that comes back once it closes. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let received = "";
    const socket = connect(port, "127.0.0.1", () => socket.write(text));
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      received += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
  });
}
