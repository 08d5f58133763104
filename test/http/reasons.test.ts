// decisions.md "Reasons for a 400": the envelope stays the contract's exactly, and the
// Problem-Reason header names the field or parameter and the rule it broke.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { describe } from "../support/describe.js";
import { buildTestApp, type CallOptions, call, tokenFor } from "../support/helpers.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };

describe("Problem-Reason on a 400", () => {
  let app: App;
  let token: string;
  before(async () => {
    app = await buildTestApp();
    token = await tokenFor(app);
    await call(app, "POST", "/book", { token, body: DUNE });
  });
  after(() => app.close());

  const cases: [string, string, CallOptions, string, string][] = [
    [
      "POST",
      "/book",
      { body: { ...DUNE, title: "x".repeat(5000) } },
      Messages.invalidInput,
      "title: at most 500 characters",
    ],
    [
      "POST",
      "/book",
      { body: { title: "Dune", year: 1965 } },
      Messages.invalidInput,
      "author: required",
    ],
    [
      "POST",
      "/book",
      { body: { ...DUNE, year: "1965" } },
      Messages.invalidInput,
      "year: a whole number from -9999 to 9999",
    ],
    [
      "POST",
      "/book",
      { body: { ...DUNE, year: 10_000 } },
      Messages.invalidInput,
      "year: a whole number from -9999 to 9999",
    ],
    [
      "POST",
      "/book",
      { body: { ...DUNE, title: null } },
      Messages.invalidInput,
      "title: must be a string",
    ],
    [
      "POST",
      "/book",
      { body: { ...DUNE, author: "" } },
      Messages.invalidInput,
      "author: must not be empty",
    ],
    [
      "POST",
      "/book",
      { body: { ...DUNE, title: "   " } },
      Messages.invalidInput,
      "title: not only spaces, and no NUL character or unpaired surrogate",
    ],
    ["POST", "/book", { body: [DUNE] }, Messages.invalidInput, "body: must be a JSON object"],
    ["POST", "/book", { payload: '{"title":' }, Messages.invalidInput, "body: not valid JSON"],
    [
      "POST",
      "/book",
      { payload: '{"__proto__":{"x":1},"title":"Dune"}' },
      Messages.invalidInput,
      "body: __proto__ and constructor.prototype keys are refused",
    ],
    ["POST", "/book", { payload: "" }, Messages.invalidInput, "body: empty; send a JSON object"],
    [
      "POST",
      "/book",
      { payload: "", headers: { "content-type": "application/json" } },
      Messages.invalidInput,
      "body: empty; send a JSON object",
    ],
    [
      "POST",
      "/book",
      { payload: Buffer.from([0x7b, 0xff, 0x7d]) },
      Messages.invalidInput,
      "body: not UTF-8",
    ],
    [
      "PUT",
      "/book/1",
      { body: { year: 1.5 } },
      Messages.invalidInput,
      "year: a whole number from -9999 to 9999",
    ],
    ["GET", "/books?limit=5000", {}, Messages.invalidInput, "limit: a whole number from 1 to 1000"],
    ["GET", "/books?limit=ten", {}, Messages.invalidInput, "limit: a whole number from 1 to 1000"],
    [
      "GET",
      "/books?limit=5&limit=6",
      {},
      Messages.invalidInput,
      "limit: a whole number from 1 to 1000",
    ],
    [
      "GET",
      "/books?sort=color",
      {},
      Messages.invalidInput,
      "sort: one of id, -id, title, -title, author, -author, year, -year",
    ],
    ["GET", "/books?q=", {}, Messages.invalidInput, "q: must not be empty"],
    ["GET", "/books?q=*", {}, Messages.invalidInput, "q: at least one letter or digit"],
    [
      "GET",
      "/books?sort=title&after=3",
      {},
      Messages.invalidInput,
      "after_key: required with after above 0 and a sort by a field",
    ],
    [
      "GET",
      "/books?after_key=Dune",
      {},
      Messages.invalidInput,
      "after_key: only with after above 0 and a sort by a field",
    ],
    [
      "GET",
      "/books?sort=year&after=1&after_key=soon",
      {},
      Messages.invalidInput,
      "after_key: a year, a whole number from -9999 to 9999",
    ],
    [
      "POST",
      "/token",
      { body: { username: "librarian" } },
      Messages.invalidRequestPayload,
      "password: required",
    ],
    ["POST", "/token", { payload: "nope" }, Messages.invalidRequestPayload, "body: not valid JSON"],
  ];
  for (const [method, url, options, message, reason] of cases) {
    const sent =
      options.payload !== undefined
        ? JSON.stringify(String(options.payload)).slice(0, 40)
        : JSON.stringify(options.body ?? "").slice(0, 40);
    test(`${method} ${url} ${sent}: ${message}, Problem-Reason "${reason}"`, async () => {
      const answer = await call(app, method, url, { token, ...options });
      assert.equal(answer.status, 400);
      assert.equal(answer.raw, JSON.stringify({ status: 400, message, data: null }));
      assert.equal(answer.headers["problem-reason"], reason);
    });
  }

  test("the API description names Problem-Reason on every 400 Invalid input or payload", async () => {
    type Answers = Record<string, { description: string; headers?: Record<string, unknown> }>;
    const doc = JSON.parse((await app.inject({ method: "GET", url: "/openapi.json" })).body) as {
      paths: Record<string, Record<string, { responses: Answers }>>;
    };
    let seen = 0;
    for (const operations of Object.values(doc.paths)) {
      for (const { responses } of Object.values(operations)) {
        const refusal = responses["400"];
        if (!refusal || !/Invalid (input|request payload)/.test(refusal.description)) continue;
        assert.ok(refusal.headers?.["problem-reason"], refusal.description);
        seen += 1;
      }
    }
    assert.ok(seen >= 4);
  });

  test("the reason never echoes the value refused", async () => {
    const secret = `${"s3cr3t".repeat(100)}é`;
    const answer = await call(app, "POST", "/book", { token, body: { ...DUNE, title: secret } });
    const reason = String(answer.headers["problem-reason"]);
    assert.ok(!reason.includes("s3cr3t"));
    assert.match(reason, /^[\x20-\x7e]{1,200}$/);
  });

  test("no Problem-Reason on success, nor on answers other than 400", async () => {
    for (const answer of [
      await call(app, "POST", "/book", { token, body: DUNE }),
      await call(app, "GET", "/books?limit=1", { token }),
      await call(app, "GET", "/book/999", { token }),
      await call(app, "PUT", "/book/999", { token, body: { year: "x" } }),
    ]) {
      assert.equal(answer.headers["problem-reason"], undefined);
    }
  });
});
