// A reporter beside spec (test/support/run-suite.ts): with TEST_FILE_TIMES=path, it writes each
// test file's time to that file, slowest first, a line a file, to see where the suite's time
// goes; unset, it writes nothing. It yields nothing to its destination (stderr): /dev/null
// there would fail the run, whose --test-force-exit syncs each destination before it exits.
import { writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import type { TestEvent } from "node:test/reporters";

export default async function* fileTimes(source: AsyncIterable<TestEvent>) {
  const times = new Map<string, number>();
  for await (const event of source) {
    // To the runner each file's process is a test at nesting 0 named after the file, spanning
    // it whole (start-up, imports, every test). The tests in it name the file that called
    // test() or describe(): test/support/describe.ts for most suites, so they are passed over.
    if (event.type !== "test:complete" || event.data.nesting !== 0) continue;
    const { file, name, details } = event.data;
    if (file === resolve(name)) times.set(file, details.duration_ms);
  }
  const path = process.env.TEST_FILE_TIMES;
  if (!path) return;
  const lines = [...times]
    .sort(([, a], [, b]) => b - a)
    .map(
      ([file, ms]) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(process.cwd(), file)}\n`,
    );
  writeFileSync(path, lines.join(""));
}
