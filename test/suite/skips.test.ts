// A suite skipped for want of something (root, Chromium, PostgreSQL) counts in the runner's
// summary as skipped, with its reason: "skipped 0" means nothing was.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../support/deploy.js";
import { describe } from "../support/describe.js";
import { withoutTestContext } from "../support/env.js";
import { FIRST_LINE_ONLY } from "../support/node-lines.js";

describe("skipped suites", () => {
  test("count in the runner's summary, each with its reason", () => {
    const dir = mkdtempSync(join(tmpdir(), "books-skip-"));
    try {
      const file = join(dir, "skips.test.ts");
      const describeModule = join(ROOT, "test", "support", "describe.ts");
      writeFileSync(
        file,
        [
          'import { test } from "node:test";',
          `import { describe } from ${JSON.stringify(describeModule)};`,
          'describe("needs root", { skip: "not run as root" }, () => { test("a", () => {}); });',
          'describe("needs nothing", { skip: false }, () => { test("b", () => {}); });',
          'describe("plain", () => { test("c", () => {}); });',
          "",
        ].join("\n"),
      );
      const run = spawnSync(
        process.execPath,
        ["--import", "tsx", "--test", "--test-reporter=tap", file],
        { cwd: ROOT, encoding: "utf8", timeout: 60_000, env: withoutTestContext() },
      );
      assert.equal(run.status, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /^ok \d+ - needs root # SKIP not run as root$/m);
      assert.match(run.stdout, /^# skipped 1$/m);
      assert.match(run.stdout, /^# pass 2$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("every test file's describe is the one that counts them", () => {
    const offenders = readdirSync(join(ROOT, "test"), { recursive: true, encoding: "utf8" })
      .filter((path) => path.endsWith(".ts"))
      .map((path) => join("test", path))
      .filter((path) => path !== join("test", "support", "describe.ts"))
      .filter((path) =>
        /import \{[^}]*\bdescribe\b[^}]*\} from "node:test"/.test(
          readFileSync(join(ROOT, path), "utf8"),
        ),
      );
    assert.deepEqual(offenders, [], "import describe from test/support/describe.ts instead");
  });

  test("on CI's later Node lines, the files of node-lines.ts are skipped, each suite counted", () => {
    for (const file of FIRST_LINE_ONLY) {
      const text = readFileSync(join(ROOT, file), "utf8");
      assert.doesNotMatch(text, /^test\(/m, `${file}: a test outside a suite would still run`);
    }
    const file = join(ROOT, "test", "deploy", "systemd.test.ts");
    const run = (again: string) =>
      spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=tap", file], {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 120_000,
        env: { ...withoutTestContext(), TEST_NODE_LINE_AGAIN: again },
      });
    const later = run("1");
    assert.equal(later.status, 0, later.stdout + later.stderr);
    assert.match(later.stdout, /# SKIP runs on the first Node line of CI only/);
    assert.match(later.stdout, /^# pass 0$/m);
    assert.doesNotMatch(later.stdout, /^# skipped 0$/m);
  });
});
