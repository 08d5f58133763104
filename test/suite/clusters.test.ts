// The commands test/support/clusters.ts runs (pg_lsclusters, psql, pg_ctlcluster): what they
// answer, however soon they exit.
import assert from "node:assert/strict";
import { test } from "node:test";
import { run } from "../support/clusters.js";
import { describe } from "../support/describe.js";

describe("a cluster's commands", () => {
  test("one that exits without reading its input gives its output, not EPIPE", async () => {
    // Far more than a pipe holds, to a command that never reads it.
    const input = "x".repeat(8 * 1024 * 1024);
    for (let i = 0; i < 5; i++) {
      assert.equal(await run("echo", ["listed"], { input }), "listed\n");
      assert.equal(await run("echo", ["listed"]), "listed\n");
    }
  });
});
