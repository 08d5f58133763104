// How the service serves the librarian's page: the built files, cached as their names allow,
// and nothing else, so every other path still answers in the envelope.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { WEB_ROOT } from "../../src/http/web-page.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call } from "../support/helpers.js";

describe("the page's files", () => {
  let app: App;
  const assets = readdirSync(`${WEB_ROOT}assets`);
  before(async () => {
    app = await buildTestApp({ webRoot: WEB_ROOT });
  });
  after(() => app.close());

  test("GET / is the page, checked again on every visit, from this origin only", async () => {
    const response = await app.inject({ method: "GET", url: "/" });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers["content-type"]), /^text\/html/);
    assert.equal(response.headers["cache-control"], "no-cache");
    assert.match(String(response.headers["content-security-policy"]), /default-src 'self'/);
    assert.ok(response.headers["x-request-id"]);
    // The page names its scripts and styles by hashed names under /assets/, no other host.
    const named = [...response.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(named.length >= 2);
    for (const url of named)
      assert.match(String(url), /^(\/assets\/[\w.-]+-[\w-]{8}\.(js|css)|data:,)$/);
  });

  test("hashed assets may be cached for a year", async () => {
    assert.ok(assets.some((name) => name.endsWith(".js")));
    for (const name of assets) {
      const response = await app.inject({ method: "GET", url: `/assets/${name}` });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers["cache-control"], "public, max-age=31536000, immutable");
    }
  });

  test("any other path is still 404 in the envelope, and / takes only GET and HEAD", async () => {
    for (const url of ["/assets/missing.js", "/index.htm", "/assets/", "/../package.json"]) {
      const answer = await call(app, "GET", url);
      assert.deepEqual(answer.body, { status: 404, message: Messages.notFound, data: null }, url);
    }
    const post = await call(app, "POST", "/", { body: {} });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, "GET, HEAD");
  });
});
