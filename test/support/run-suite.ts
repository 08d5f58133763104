// `npm test`: every test file (or the files given as arguments), in two rounds of Node's test
// runner. First the files that keep to themselves, three at once: they keep both cores busy. Then
// the files in APART, two at once: their tests load the machine and hold the service to seconds
// under that load (a soak under wrk, 2,000 pipelined requests, a failover under load, a disk filled
// under 20 writers, hostile bodies and long listings that must not hold the event loop 100 ms).
// Beside the first round's files they failed about one line in two; beside each other they pass,
// for most of their time is spent waiting on timeouts, with a core idle. docs/development.md has
// the figures. With TEST_FILE_TIMES, each file's time of both rounds, slowest first
// (test/support/file-times.ts).
import { spawnSync } from "node:child_process";
import { existsSync, globSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { ROOT } from "./deploy.js";

export const APART: readonly string[] = [
  "test/books/listing-loop.test.ts",
  "test/http/connections.test.ts",
  "test/http/hostile.test.ts",
  "test/server/disk-full.test.ts",
  "test/server/runtime.test.ts",
  "test/store/failover.test.ts",
  "test/store/restarts.test.ts",
];
const AT_ONCE = 3;
const APART_AT_ONCE = 2;

const NODE_TEST = [
  "--import=tsx",
  "--import=./test/support/report-before-exit.ts",
  "--test",
  "--test-force-exit",
  "--test-timeout=600000",
  "--test-reporter=spec",
  "--test-reporter-destination=stdout",
  "--test-reporter=./test/support/file-times.ts",
  "--test-reporter-destination=stderr",
];

/** One round of the runner on these files, its times to `times` if given; true if it passed. */
function round(files: string[], concurrency: number, times: string | undefined): boolean {
  if (files.length === 0) return true;
  const run = spawnSync(
    process.execPath,
    [...NODE_TEST, `--test-concurrency=${concurrency}`, ...files],
    { cwd: ROOT, stdio: "inherit", env: { ...process.env, TEST_FILE_TIMES: times } },
  );
  return run.status === 0;
}

/** The lines of both rounds' times, slowest first, into `path`. */
function mergeTimes(parts: string[], path: string): void {
  const lines = parts
    .filter((part) => existsSync(part))
    .flatMap((part) => readFileSync(part, "utf8").split("\n"))
    .filter((line) => line !== "")
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  writeFileSync(resolve(path), lines.map((line) => `${line}\n`).join(""));
}

function main(args: string[]): number {
  for (const file of APART) {
    if (!existsSync(join(ROOT, file))) throw new Error(`run-suite.ts: APART names ${file}`);
  }
  const files = (args.length > 0 ? args : globSync("test/**/*.test.ts", { cwd: ROOT })).map(
    (file) => relative(ROOT, resolve(file)),
  );
  const apart = files.filter((file) => APART.includes(file));
  const together = files.filter((file) => !APART.includes(file));
  const path = process.env.TEST_FILE_TIMES;
  const dir = path ? mkdtempSync(join(tmpdir(), "books-times-")) : undefined;
  const parts = dir ? [join(dir, "together"), join(dir, "apart")] : [];
  try {
    const passed = [round(together, AT_ONCE, parts[0]), round(apart, APART_AT_ONCE, parts[1])];
    if (path) mergeTimes(parts, path);
    return passed.every(Boolean) ? 0 : 1;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = main(process.argv.slice(2));
