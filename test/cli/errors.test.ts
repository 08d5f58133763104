// The one line a failed command prints.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { describeFailure } from "../../src/cli/errors.js";
import { createClient } from "../../src/client/client.js";
import type { App } from "../../src/http/app.js";
import { describe } from "../support/describe.js";
import { buildTestApp, listenLocally, TEST_PASSWORD, TEST_USERNAME } from "../support/helpers.js";

describe("describeFailure", () => {
  let app: App;
  let url: string;
  before(async () => {
    app = await buildTestApp();
    url = await listenLocally(app);
  });
  after(() => app.close());

  test("a 400 from the service: the status, the message, then the reason", async () => {
    const client = createClient({ baseUrl: url, username: TEST_USERNAME, password: TEST_PASSWORD });
    const error = await client.createBook({ title: "x".repeat(501), author: "A", year: 1 }).then(
      () => assert.fail("the service took a 501-character title"),
      (refusal: unknown) => refusal,
    );
    assert.deepEqual(describeFailure(error), {
      message: "the service answered 400: Invalid input (title: at most 500 characters)",
      exitCode: 1,
    });
  });

  test("a refusal without a reason is the status and the message alone", async () => {
    const client = createClient({ baseUrl: url, username: TEST_USERNAME, password: "wrong" });
    const error = await client.token().catch((refusal: unknown) => refusal);
    assert.equal(describeFailure(error).message, "the service answered 401: Invalid credentials");
  });
});
