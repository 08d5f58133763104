// The contract suite again, with an account in every store it uses: accounts are an extension
// that a client of the contract never notices (decisions.md, "Accounts").
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { describe } from "../support/describe.js";

describe("the contract with an account present", () => {
  test("test/http/contract.test.ts passes unchanged", async () => {
    // Not as a child of this runner (NODE_TEST_CONTEXT): a run of its own, with its summary.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--test", "--test-reporter=spec", "test/http/contract.test.ts"],
      { env: { ...env, TEST_ACCOUNT_PRESENT: "1" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    const code = await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(code, 0, output.slice(-4000));
    assert.match(output, /ℹ fail 0\n/);
    assert.ok(Number(/ℹ pass (\d+)/.exec(output)?.[1]) > 100, output.slice(-4000));
  });
});
