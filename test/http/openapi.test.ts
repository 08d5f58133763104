// The OpenAPI description: generated from the routes, complete, and true to real answers.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { App } from "../../src/http/app.js";
import { describe } from "../support/describe.js";
import { type Answer, buildTestApp, type CallOptions, call, tokenFor } from "../support/helpers.js";

interface Response {
  description: string;
  headers?: Record<string, { schema: { type: string }; required?: boolean }>;
  content?: { "application/json": { schema: object } };
}
interface Operation {
  operationId?: string;
  description?: string;
  parameters?: { name: string; in: string; schema: { type: string; maximum?: number } }[];
  responses: Record<string, Response>;
  security?: unknown[];
}
type Document = {
  openapi: string;
  info: { license?: { identifier: string }; contact?: object; version: string };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, unknown>;
    schemas: Record<string, object>;
    responses: Record<string, Response>;
  };
};

// Headers any HTTP answer may carry, which an API description does not list.
const TRANSPORT_HEADERS = ["content-type", "content-length", "date", "connection", "keep-alive"];

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
        served.add(`${method} ${path.replace(/:(\w+)/g, "{$1}")}`);
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

  test("book, change and account routes require the token; /token, /health and /ready need none", () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const operation of Object.values(operations)) {
        const needsToken = /^\/(book|accounts|changes)/.test(path);
        assert.deepEqual(operation.security, needsToken ? [{ token: [] }] : [], path);
      }
    }
  });

  test("every operation has a name a generator can use as a method, and a description", () => {
    const names = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => {
        assert.ok(operation.description, `${method} ${path} has a description`);
        return `${method.toUpperCase()} ${path} ${operation.operationId}`;
      }),
    );
    assert.deepEqual(names.sort(), [
      "DELETE /accounts/{id} deleteAccount",
      "DELETE /book/{id} deleteBook",
      "GET /accounts listAccounts",
      "GET /accounts/me getSignedIn",
      "GET /book/{id} getBook",
      "GET /book/{id}/history bookHistory",
      "GET /books listBooks",
      "GET /changes listChanges",
      "GET /health getHealth",
      "GET /ready getReadiness",
      "HEAD /accounts listAccountsHead",
      "HEAD /accounts/me getSignedInHead",
      "HEAD /book/{id} getBookHead",
      "HEAD /book/{id}/history bookHistoryHead",
      "HEAD /books listBooksHead",
      "HEAD /changes listChangesHead",
      "HEAD /health getHealthHead",
      "HEAD /ready getReadinessHead",
      "PATCH /accounts/{id} updateAccount",
      "POST /accounts createAccount",
      "POST /book createBook",
      "POST /book/{id}/restore restoreBook",
      "POST /token createToken",
      "PUT /accounts/me/password changeOwnPassword",
      "PUT /book/{id} updateBook",
    ]);
  });

  test("HEAD is described as its GET, same statuses and headers, no body", () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      const { get, head } = operations;
      if (get === undefined) continue;
      assert.ok(head, `HEAD ${path} is described`);
      assert.deepEqual(Object.keys(head.responses), Object.keys(get.responses), path);
      for (const [status, response] of Object.entries(head.responses)) {
        assert.equal(response.content, undefined, `HEAD ${path} ${status} has no body`);
        assert.deepEqual(response.headers, get.responses[status]?.headers, `${path} ${status}`);
      }
    }
  });

  test("headers always sent are required: X-Request-Id, Cache-Control, nosniff, a book's ETag", () => {
    const answers = [
      ...Object.values(doc.paths).flatMap((operations) =>
        Object.values(operations).flatMap((operation) => Object.values(operation.responses)),
      ),
      ...Object.values(doc.components.responses),
    ];
    let etags = 0;
    for (const response of answers) {
      for (const [name, header] of Object.entries(response.headers ?? {})) {
        const always = ["x-request-id", "cache-control", "x-content-type-options", "etag"];
        assert.equal(header.required, always.includes(name) || undefined, `${name}`);
        if (name === "etag") etags += 1;
      }
      assert.equal(response.headers?.["x-content-type-options"]?.required, true);
    }
    // GET /book/{id} 200 and 304, and its HEAD's; POST /book 201; PUT /book/{id} 200; POST
    // /book/{id}/restore 201.
    assert.equal(etags, 7);
  });

  test("books and envelopes are named schemas, referred to rather than repeated", () => {
    for (const name of ["Book", "NewBook", "BookChanges", "Credentials"]) {
      assert.ok(doc.components.schemas[name], name);
    }
    for (const name of ["BookEnvelope", "BooksEnvelope", "TokenEnvelope", "EmptyEnvelope"]) {
      assert.ok(doc.components.schemas[name], name);
    }
    const text = JSON.stringify(doc.paths);
    assert.doesNotMatch(text, /"title":\{"type"/, "no book repeated inline under paths");
    assert.match(text, /"\$ref":"#\/components\/schemas\/NewBook"/);
  });

  test("numbers are integers on input too, with their bounds", () => {
    const parameter = (path: string, method: string, name: string) =>
      doc.paths[path]?.[method]?.parameters?.find((p) => p.name === name)?.schema;
    assert.deepEqual(parameter("/book/{id}", "get", "id"), {
      type: "integer",
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    assert.deepEqual(parameter("/books", "get", "limit"), {
      type: "integer",
      minimum: 1,
      maximum: 1000,
    });
    assert.equal(parameter("/books", "get", "after")?.maximum, Number.MAX_SAFE_INTEGER);
    assert.equal(parameter("/books", "get", "year")?.type, "integer");
  });

  test("every operation lists the 408 and 431 Node's HTTP parser may give any request", () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const status of ["408", "431"]) {
          assert.ok(operation.responses[status], `${method} ${path} lists ${status}`);
        }
      }
    }
  });

  test("names its server, license and contact, and 404 and 405 outside every operation", () => {
    assert.deepEqual(doc.servers, [{ url: "/", description: "The service serving this document" }]);
    assert.equal(doc.info.license?.identifier, "MIT");
    assert.ok(doc.info.contact);
    const packageJson = new URL("../../package.json", import.meta.url);
    assert.equal(doc.info.version, JSON.parse(readFileSync(packageJson, "utf8")).version);
    assert.ok(doc.components.responses.NotFound);
    assert.ok(doc.components.responses.MethodNotAllowed?.headers?.allow);
  });

  test("real answers, their bodies and headers, match the document", async () => {
    const ajv = new Ajv2020({ strict: false });
    // The whole document as one schema, so its $refs to components resolve.
    ajv.addSchema(doc, "openapi");
    const pointer = (...parts: string[]) =>
      parts.map((part) => `/${part.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
    const check = async (
      method: string,
      path: string,
      documented: string,
      options: CallOptions = {},
    ) => {
      const answer: Answer = await call(app, method, path, options);
      const status = String(answer.status);
      const response = doc.paths[documented]?.[method.toLowerCase()]?.responses[status];
      assert.ok(response?.content, `${method} ${documented} documents no ${status}`);
      const at = pointer("paths", documented, method.toLowerCase(), "responses", status);
      assert.ok(
        ajv.validate({ $ref: `openapi#${at}/content/application~1json/schema` }, answer.body),
        `${method} ${path} ${status}: ${ajv.errorsText()}`,
      );
      for (const header of Object.keys(answer.headers)) {
        if (TRANSPORT_HEADERS.includes(header)) continue;
        assert.ok(response.headers?.[header], `${method} ${documented} ${status} lists ${header}`);
      }
      for (const [name, header] of Object.entries(response.headers ?? {})) {
        if (!header.required) continue;
        assert.ok(answer.headers[name], `${method} ${path} ${status} sends the required ${name}`);
      }
      return answer;
    };
    const book = { title: "Dune", author: "Frank Herbert", year: 1965 };
    const created = await check("POST", "/book", "/book", { token, body: book });
    const id = (created.body.data as { id: number }).id;
    await check("POST", "/book", "/book", { token, body: { title: 1 } });
    await check("POST", "/book", "/book", { body: book });
    await check("POST", "/book", "/book", { token, payload: "x".repeat(70_000) });
    await check("GET", "/books", "/books", { token });
    await check("POST", "/book", "/book", { token, body: { ...book, year: 1966 } });
    const page = await check("GET", "/books?limit=1", "/books", {
      token,
      headers: { prefer: "count=exact" },
    });
    assert.ok(page.headers.link && page.headers["x-total-count"] === "2", "both headers seen");
    await check("GET", "/books?limit=01", "/books", { token });
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
  test("has one document address, /openapi.json: Swagger UI's own copies are not served", async () => {
    const app = await buildTestApp();
    for (const url of ["/docs/json", "/docs/yaml"]) {
      const answer = await call(app, "GET", url);
      assert.deepEqual([answer.status, answer.body.message], [404, "Not found"], url);
    }
    const init = await app.inject({ method: "GET", url: "/docs/static/swagger-initializer.js" });
    assert.match(init.body, /"url":"\/openapi\.json"/);
    await app.close();
  });

  test("index.html leads to the page, with a query string too: no redirect loop", async () => {
    const app = await buildTestApp();
    for (const url of ["/docs/static/index.html", "/docs/static/index.html?a=1"]) {
      const answer = await app.inject({ method: "GET", url });
      assert.equal(answer.statusCode, 302, url);
      assert.equal(answer.headers.location, "/docs/", url);
    }
    await app.close();
  });

  test("is the project's own: its name and icon, no third party's logo, a link to /", async () => {
    const app = await buildTestApp();
    const page = await app.inject({ method: "GET", url: "/docs/" });
    assert.match(page.body, /<title>Book Catalogue Service: API<\/title>/);
    assert.doesNotMatch(page.body, /favicon-(16|32)x/, "not Swagger's icons");
    const doc = JSON.parse((await app.inject({ method: "GET", url: "/openapi.json" })).body);
    assert.match(doc.info.description, /\[The librarian's page\]\(\/\)/);
    await app.close();
  });

  test("the sign-in example is the development pair only when the service uses it", async () => {
    const example = async (env: Record<string, string>) => {
      const app = await buildTestApp({ env });
      const doc = JSON.parse((await app.inject({ method: "GET", url: "/openapi.json" })).body);
      await app.close();
      return doc.components.schemas.Credentials.examples[0];
    };
    assert.deepEqual(await example({ AUTH_USERNAME: "", AUTH_PASSWORD: "" }), {
      username: "admin",
      password: "password",
    });
    const configured = await example({});
    assert.deepEqual(configured, { username: "your-username", password: "your-password" });
  });

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
