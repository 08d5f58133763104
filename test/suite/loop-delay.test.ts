// The loop tests' measure (test/support/loop-delay.ts) sees the loop held however it is held:
// by work, and by a wait that uses no CPU, such as a lock wait.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { describe } from "../support/describe.js";
import { type LoopRecord, startLoopRecord } from "../support/loop-delay.js";

const HOLD_MS = 150;

async function recordAround(hold: () => void): Promise<LoopRecord> {
  const records: LoopRecord[] = [];
  const stop = startLoopRecord("hold", records);
  await sleep(20);
  hold();
  await sleep(20);
  stop();
  return records[0] as LoopRecord;
}

describe("the event loop's measure in the loop tests", () => {
  test("a loop asleep in a wait is held: the gap counts, though no CPU was used", async () => {
    const record = await recordAround(() => {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, HOLD_MS);
    });
    assert.ok(record.maxStalledMs >= HOLD_MS - 10, `held ${record.maxStalledMs} ms`);
    assert.ok(record.maxHeldMs < HOLD_MS / 2, `its CPU bound: ${record.maxHeldMs} ms`);
  });

  test("a loop at work is held, by either measure", async () => {
    const record = await recordAround(() => {
      const start = process.threadCpuUsage();
      let used = 0;
      while (used < HOLD_MS * 1000) {
        const { user, system } = process.threadCpuUsage(start);
        used = user + system;
      }
    });
    assert.ok(record.maxStalledMs >= HOLD_MS - 10, `held ${record.maxStalledMs} ms`);
    assert.ok(record.maxHeldMs >= HOLD_MS - 10, `its CPU bound: ${record.maxHeldMs} ms`);
  });
});
