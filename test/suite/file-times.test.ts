// `npm test`'s command, on two files of its own: spec's output on stdout as before, and with
// TEST_FILE_TIMES each file's time, slowest first (test/support/file-times.ts).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import { ROOT } from "../support/deploy.js";
import { describe } from "../support/describe.js";
import { withoutTestContext } from "../support/env.js";

/** package.json's test command on these files instead of the suite's. */
function testCommand(files: string[]): string {
  const script: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.test;
  return `${script} ${files.map((file) => `'${file}'`).join(" ")}`;
}

/** The command run as npm runs it, from the project's folder, on the Node running this test. */
function runTests(files: string[], env: NodeJS.ProcessEnv) {
  const path = `${dirname(process.execPath)}:${process.env.PATH}`;
  return spawnSync("sh", ["-c", testCommand(files)], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...withoutTestContext(), ...env, PATH: path },
  });
}

describe("the test command's times a file", () => {
  test("lists each file with its time, slowest first, when TEST_FILE_TIMES names a file", () => {
    const dir = mkdtempSync(join(tmpdir(), "books-times-"));
    try {
      const quick = join(dir, "quick.test.mjs");
      const slow = join(dir, "slow.test.mjs");
      const header = 'import { test } from "node:test";\n';
      writeFileSync(quick, `${header}test("quick", () => {});\n`);
      // Its test is made in another module, as the suites of test/support/describe.ts are.
      writeFileSync(
        join(dir, "wait.mjs"),
        `${header}export const wait = (ms) =>\n` +
          '  test("slow", () => new Promise((r) => setTimeout(r, ms)));\n',
      );
      writeFileSync(slow, 'import { wait } from "./wait.mjs";\nwait(2000);\n');
      const times = join(dir, "times.txt");
      const run = runTests([quick, slow], { TEST_FILE_TIMES: times });
      assert.equal(run.status, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /^✔ quick \(/m);
      assert.match(run.stdout, /^ℹ pass 2$/m);
      const rows = readFileSync(times, "utf8")
        .trimEnd()
        .split("\n")
        .map((line) => {
          const row = /^ *(\d+\.\d) s {2}(.+)$/.exec(line);
          assert.ok(row, line);
          return { seconds: Number(row[1]), file: row[2] };
        });
      assert.deepEqual(
        rows.map((row) => row.file),
        [relative(ROOT, slow), relative(ROOT, quick)],
      );
      assert.ok((rows[0]?.seconds ?? 0) >= 2, JSON.stringify(rows));
      // Unset, the run writes nothing beside spec's output.
      const plain = runTests([quick], { TEST_FILE_TIMES: undefined });
      assert.equal(plain.status, 0, plain.stdout + plain.stderr);
      assert.match(plain.stdout, /^✔ quick \(/m);
      assert.doesNotMatch(plain.stdout, /quick\.test\.mjs/);
      assert.equal(plain.stderr, "");
      assert.deepEqual(readdirSync(dir).sort(), [
        "quick.test.mjs",
        "slow.test.mjs",
        "times.txt",
        "wait.mjs",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("fails when a file fails, and still runs the others", () => {
    const dir = mkdtempSync(join(tmpdir(), "books-times-"));
    try {
      const header = 'import { test } from "node:test";\n';
      const failing = join(dir, "failing.test.mjs");
      const quick = join(dir, "quick.test.mjs");
      writeFileSync(failing, `${header}test("fails", () => { throw new Error("no"); });\n`);
      writeFileSync(quick, `${header}test("quick", () => {});\n`);
      const run = runTests([failing, quick], {});
      assert.equal(run.status, 1, run.stdout + run.stderr);
      assert.match(run.stdout, /^✖ fails \(/m);
      assert.match(run.stdout, /^✔ quick \(/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
