// The suite's describe(): node:test's, but for a skip. node:test reports a skipped suite as
// "# SKIP" and counts it nowhere, so a run that skipped whole suites (no root, no Chromium)
// still summed up as "skipped 0". Here a suite with a reason to skip is, in its place, one
// skipped test of the same name: the runner counts it, and prints the reason beside it.
import { describe as nodeDescribe, type SuiteContext, type TestOptions, test } from "node:test";
import { lineSkip } from "./node-lines.js";

/** Decided once a test file: its suites may all run on CI's first Node line only. */
const skipOnThisLine = lineSkip();

type SuiteFn = (s: SuiteContext) => void | Promise<void>;

export function describe(name: string, fn: SuiteFn): void;
export function describe(name: string, options: TestOptions, fn: SuiteFn): void;
export function describe(
  name: string,
  optionsOrFn: TestOptions | SuiteFn,
  maybeFn?: SuiteFn,
): void {
  const [options, fn] =
    typeof optionsOrFn === "function" ? [{}, optionsOrFn] : [optionsOrFn, maybeFn as SuiteFn];
  const skip = options.skip || skipOnThisLine;
  if (skip) {
    test(name, { skip }, () => {});
    return;
  }
  nodeDescribe(name, options, fn);
}
