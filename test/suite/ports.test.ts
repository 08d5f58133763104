// The ports the tests choose themselves (their PostgreSQL clusters') come from
// TEST_PORT_RANGE, 20000-32000 unless set.
import assert from "node:assert/strict";
import { test } from "node:test";
import { clusterSkipReason, createCluster } from "../support/clusters.js";
import { describe } from "../support/describe.js";
import { withEnv } from "../support/env.js";
import { DEFAULT_PORT_RANGE, portRange } from "../support/ports.js";

describe("TEST_PORT_RANGE", () => {
  test("FROM-TO, both ends included; 20000-32000 unless set", async () => {
    assert.equal(DEFAULT_PORT_RANGE, "20000-32000");
    assert.deepEqual(portRange("21000-21010"), { from: 21_000, to: 21_010 });
    assert.deepEqual(portRange(" 5000 - 5000 "), { from: 5_000, to: 5_000 });
    const unset = await withEnv({ TEST_PORT_RANGE: undefined }, () => portRange());
    assert.deepEqual(unset, { from: 20_000, to: 32_000 });
    const set = await withEnv({ TEST_PORT_RANGE: "40000-40100" }, () => portRange());
    assert.deepEqual(set, { from: 40_000, to: 40_100 });
  });

  test("anything else is refused, saying what it should be", () => {
    for (const text of ["20000", "a-b", "0-10", "30000-20000", "1-65536", "1-2-3", ""]) {
      assert.throws(() => portRange(text), /TEST_PORT_RANGE must be FROM-TO.*20000-32000/);
    }
  });

  test("a cluster of a test's own listens on a port of the range", {
    skip: clusterSkipReason(),
  }, async () => {
    // Outside the default range, so only the setting can have put it there.
    const cluster = await withEnv({ TEST_PORT_RANGE: "19000-19099" }, () => createCluster());
    try {
      assert.ok(cluster.port >= 19_000 && cluster.port <= 19_099, `port ${cluster.port}`);
      assert.equal(await cluster.psql("SHOW port"), String(cluster.port));
    } finally {
      await cluster.drop();
    }
  });
});
