// The OpenAPI description: generated from the routes, complete, and true to real answers.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { App } from "../src/app.js";
import { type Answer, buildTestApp, type CallOptions, call, tokenFor } from "./helpers.js";

interface Operation {
  responses: Record<string, { content?: { "application/json": { schema: object } } }>;
  security?: unknown[];
}
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};

describe("GET /openapi.json", () => {
  let app: App;
  let doc: Document;
  let token: string;
  before(async () => {
    app = await buildTestApp({ env: { LOGIN_MAX_FAILURES: "2" } });
    token = await tokenFor(app);
    doc = JSON.parse((await app.inject({ method: "GET", url: "/openapi.json" })).body);
  });
  after(() => app.close());

  test("is public OpenAPI 3.1 with the token header as its security scheme", () => {
    assert.equal(doc.openapi, "3.1.0");
    assert.deepEqual(doc.components.securitySchemes.token, {
      type: "apiKey",
      in: "header",
      name: "Authorization",
      description: "The token from POST /token, bare or as `Bearer <token>`.",
    });
  });

  test("describes every route the app serves, and no other", () => {
    // printRoutes draws the router's tree: each line a path segment, indented four
    // characters a level; a path is its segments joined. The documentation's own pages and
    // the document itself are left out of it.
    const served = new Set<string>();
    const segments: string[] = [];
    for (const line of app.printRoutes({ commonPrefix: false }).split("\n")) {
      const match = /^([│ ]*)[├└]── (.+) \(([A-Z, ]+)\)$/.exec(line);
      if (!match) continue;
      segments.length = (match[1] as string).length / 4;
      segments.push(match[2] as string);
      const path = segments.join("");
      if (path.startsWith("/docs") || path === "/openapi.json") continue;
      for (const method of (match[3] as string).split(", ")) {
        if (method !== "HEAD") served.add(`${method} ${path.replace(/:(\w+)/g, "{$1}")}`);
      }
    }
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    assert.deepEqual([...documented].sort(), [...served].sort());
    assert.ok(served.has("GET /book/{id}") && served.has("POST /token"), [...served].join());
  });

  test("book routes require the token; /token, /health and /ready do not", () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const operation of Object.values(operations)) {
        const needsToken = path.startsWith("/book");
        assert.equal(operation.security !== undefined, needsToken, path);
      }
    }
  });

  test("real answers, successes and failures, validate against the document", async () => {
    const ajv = new Ajv2020({ strict: false });
    const check = async (
      method: string,
      path: string,
      documented: string,
      options: CallOptions = {},
    ) => {
      const answer: Answer = await call(app, method, path, options);
      const schema =
        doc.paths[documented]?.[method.toLowerCase()]?.responses[String(answer.status)]?.content?.[
          "application/json"
        ].schema;
      assert.ok(schema, `${method} ${documented} documents no ${answer.status}`);
      assert.ok(
        ajv.validate(schema, answer.body),
        `${method} ${path} ${answer.status}: ${ajv.errorsText()}`,
      );
      return answer;
    };
    const book = { title: "Dune", author: "Frank Herbert", year: 1965 };
    const created = await check("POST", "/book", "/book", { token, body: book });
    const id = (created.body.data as { id: number }).id;
    await check("POST", "/book", "/book", { token, body: { title: 1 } });
    await check("POST", "/book", "/book", { body: book });
    await check("POST", "/book", "/book", { token, payload: "x".repeat(70_000) });
    await check("GET", "/books", "/books", { token });
    await check("GET", "/books", "/books", { token: "nonsense" });
    await check("GET", `/book/${id}`, "/book/{id}", { token });
    await check("GET", "/book/999999", "/book/{id}", { token });
    await check("PUT", `/book/${id}`, "/book/{id}", { token, body: { year: 1966 } });
    await check("PUT", `/book/${id}`, "/book/{id}", { token, body: { year: "x" } });
    await check("DELETE", `/book/${id}`, "/book/{id}", { token });
    await check("DELETE", `/book/${id}`, "/book/{id}", { token });
    await check("GET", "/health", "/health");
    await check("GET", "/ready", "/ready");
    const login = { username: "librarian", password: "wrong" };
    await check("POST", "/token", "/token", { body: { username: 1 } });
    await check("POST", "/token", "/token", { body: login, remoteAddress: "192.0.2.1" });
    await check("POST", "/token", "/token", { body: login, remoteAddress: "192.0.2.1" });
    const limited = await check("POST", "/token", "/token", {
      body: login,
      remoteAddress: "192.0.2.1",
    });
    assert.equal(limited.status, 429);
  });
});

describe("GET /docs", () => {
  test("serves the interactive page from the package itself, pointing at no other host", async () => {
    const app = await buildTestApp();
    const page = await app.inject({ method: "GET", url: "/docs/" });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers["content-type"] as string, /text\/html/);
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(assets.length > 0);
    for (const asset of assets) {
      assert.ok(!/^(https?:)?\/\//.test(asset), `external asset ${asset}`);
      const url = new URL(asset, "http://localhost/docs/").pathname;
      assert.equal((await app.inject({ method: "GET", url })).statusCode, 200, url);
    }
    const init = await app.inject({ method: "GET", url: "/docs/static/swagger-initializer.js" });
    // Comments may cite web pages; the code itself names no other host.
    const code = init.body.replace(/\/\/ .*$/gm, "");
    assert.doesNotMatch(code, /https?:\/\//, "the page calls no other host");
    assert.match(code, /validatorUrl/);
    await app.close();
  });
});
