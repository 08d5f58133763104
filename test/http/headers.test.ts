// Security headers on every answer, and the docs page's policy.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { buildTestApp, call, listenLocally, tokenFor } from "../support/helpers.js";

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
});
