// The served /openapi.json through the linters integrators run: Spectral's OpenAPI rules and
// Redocly CLI's recommended rules, with the project's rulesets, must find nothing at all.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe } from "../support/describe.js";
import { buildTestApp } from "../support/helpers.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const RULESETS = [".spectral.yaml", "redocly.yaml", ".redocly.lint-ignore.yaml"];
// Neither tool may call home from a test run.
const QUIET = {
  ...process.env,
  SCARF_ANALYTICS: "false",
  REDOCLY_TELEMETRY: "off",
  REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
  NO_COLOR: "1",
};

/** Runs a linter's command; its standard output whatever the exit code (findings exit 1). */
async function run(bin: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(join(ROOT, "node_modules/.bin", bin), args, {
      cwd,
      env: QUIET,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    if (!stdout) throw new Error(`${bin} failed: ${stderr}`);
    return stdout;
  }
}

describe("lint of /openapi.json", () => {
  let dir: string;
  before(async () => {
    // The document as served, beside the project's rulesets, as an integrator would lint it.
    dir = mkdtempSync(join(tmpdir(), "books-lint-"));
    const app = await buildTestApp();
    const served = await app.inject({ method: "GET", url: "/openapi.json" });
    await app.close();
    writeFileSync(join(dir, "openapi.json"), served.body);
    for (const file of RULESETS) copyFileSync(join(ROOT, file), join(dir, file));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("Spectral (spectral:oas): no error, no warning, no hint", async () => {
    await run(
      "spectral",
      // As docs/api.md says to run it: the ruleset is found in the folder.
      ["lint", "openapi.json", "-f", "json", "-o", "found.json"],
      dir,
    );
    const findings = JSON.parse(readFileSync(join(dir, "found.json"), "utf8")) as {
      code: string;
      path: string[];
    }[];
    assert.deepEqual(
      findings.map((f) => `${f.code} at ${f.path.join(".")}`),
      [],
    );
  });

  test("Redocly CLI (recommended): no error, no warning", async () => {
    const out = await run("redocly", ["lint", "openapi.json", "--format", "json"], dir);
    const report = JSON.parse(out.slice(out.indexOf("{"))) as {
      totals: { errors: number; warnings: number; ignored: number };
      problems: { ruleId: string; message: string }[];
    };
    assert.deepEqual(
      report.problems.map((p) => `${p.ruleId}: ${p.message}`),
      [],
    );
    assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 2 });
  });

  test("the rulesets silence one rule, in two named places only, and say why", () => {
    const spectral = readFileSync(join(ROOT, ".spectral.yaml"), "utf8");
    const silenced = [...spectral.matchAll(/^\s+([\w-]+): "off"$/gm)].map((m) => m[1]);
    assert.deepEqual(silenced, ["oas3-unused-component"]);
    assert.doesNotMatch(readFileSync(join(ROOT, "redocly.yaml"), "utf8"), /:\s*off\b/);
    const ignored = readFileSync(join(ROOT, ".redocly.lint-ignore.yaml"), "utf8");
    for (const text of [spectral, ignored]) {
      assert.match(text, /# .*404 "Not found" and 405 "Method not allowed"/);
      const places = [...text.matchAll(/#\/components\/responses\/(\w+)/g)].map((m) => m[1]);
      assert.deepEqual(places, ["NotFound", "MethodNotAllowed"]);
    }
  });
});
