// How long the event loop of this process was held, for tests whose service runs in it.
//
// A delay is wall time, so on a busy machine it also counts time the OS gave this process no
// CPU. Each gap between two ticks is therefore also bounded by the CPU time this thread used
// in it: a request that holds the loop for 100 ms spends 100 ms of CPU, a thread waiting for a
// core does not. (This thread's: the store's own threads work beside the loop.) Tests assert
// on that bound and report the plain delay beside it. A loop asleep in a lock wait uses no
// CPU, so tests of waits take the gap less the time this thread waited for a core in it
// (Linux's schedstat): what is left is time it ran or slept, either of which holds the loop.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { type IntervalHistogram, monitorEventLoopDelay } from "node:perf_hooks";
import type { TestContext } from "node:test";

export const LOOP_DELAY_LIMIT_MS = 100;
const TICK_MS = 5;

export interface LoopRecord {
  what: string;
  /** The event-loop delay, as perf_hooks measures it (nanoseconds). */
  delay: IntervalHistogram;
  /** The longest gap between two ticks, and the longest such gap bounded by the CPU used in it. */
  maxGapMs: number;
  maxHeldMs: number;
  /** The longest gap less the time this thread waited for a core in it (the gap where unknown). */
  maxStalledMs: number;
}

/** Nanoseconds this thread has waited for a core (Linux), or 0 where that is not known. */
function queuedNs(): number {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "latin1").split(" ")[1]) || 0;
  } catch {
    return 0;
  }
}

/**
 * Records the loop from now until the returned function is called, into a record added to
 * `records` (a histogram of its own each time: one re-enabled after a pause would count it).
 */
export function startLoopRecord(what: string, records: LoopRecord[]): () => void {
  const record: LoopRecord = {
    what,
    delay: monitorEventLoopDelay({ resolution: TICK_MS }),
    maxGapMs: 0,
    maxHeldMs: 0,
    maxStalledMs: 0,
  };
  record.delay.enable();
  records.push(record);
  let wall = performance.now();
  let cpu = process.threadCpuUsage();
  let queued = queuedNs();
  const ticker = setInterval(() => {
    const gapMs = performance.now() - wall;
    const used = process.threadCpuUsage(cpu);
    record.maxGapMs = Math.max(record.maxGapMs, gapMs);
    record.maxHeldMs = Math.max(
      record.maxHeldMs,
      Math.min(gapMs, (used.user + used.system) / 1000),
    );
    const queuedNow = queuedNs();
    record.maxStalledMs = Math.max(record.maxStalledMs, gapMs - (queuedNow - queued) / 1e6);
    wall = performance.now();
    cpu = process.threadCpuUsage();
    queued = queuedNow;
  }, TICK_MS);
  return () => {
    clearInterval(ticker);
    record.delay.disable();
  };
}

/** Reports the record, and fails unless the loop was never held for LOOP_DELAY_LIMIT_MS. */
export function assertLoopNeverHeld(t: TestContext, record: LoopRecord): void {
  const { what, delay, maxGapMs, maxHeldMs } = record;
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  t.diagnostic(
    `${what}: event-loop delay max ${ms(delay.max / 1e6)}, p99 ${ms(delay.percentile(99) / 1e6)}, mean ${ms(delay.mean / 1e6)} (${delay.count} samples); longest gap ${ms(maxGapMs)}, of which this thread ran at most ${ms(maxHeldMs)}`,
  );
  assert.ok(delay.count > 0, `${what}: the delay was recorded`);
  assert.ok(
    maxHeldMs < LOOP_DELAY_LIMIT_MS,
    `${what}: the event loop was held ${ms(maxHeldMs)} (CPU time within the longest gap)`,
  );
}
