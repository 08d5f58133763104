// The README's walk-through, run as written against `npm start`, its output compared exactly.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startService } from "./support/service.js";

const README = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), "..", "README.md"),
  "utf8",
);

/** The fenced block that follows the marker comment. */
function blockAfter(marker: string): string {
  const at = README.indexOf(`<!-- ${marker}`);
  assert.ok(at >= 0, `README has no ${marker} marker`);
  const match = /```[a-z]*\n([\s\S]*?)```/.exec(README.slice(at));
  assert.ok(match, `no code block after ${marker}`);
  return match[1] as string;
}

test("the README walk-through works as written on a fresh database", async () => {
  const commands = blockAfter("walkthrough:commands");
  const expected = blockAfter("walkthrough:output");
  const dir = mkdtempSync(join(tmpdir(), "books-readme-"));
  // The README's defaults: development credentials, a fresh embedded store. Only the port
  // differs, so the test never collides with a service already on 8080.
  const service = await startService({
    HOST: "127.0.0.1",
    PORT: "0",
    DB_URL: `sqlite:${join(dir, "books.db")}`,
  });
  try {
    const port = new URL(service.url).port;
    const script = commands.replaceAll("http://localhost:8080", `http://localhost:${port}`);
    const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script]);
    assert.equal(stdout, expected);
    // Started on the defaults, it said which variables to set.
    const warnings = service
      .output()
      .split("\n")
      .filter((line) => line.includes('"level":40'));
    assert.equal(warnings.filter((line) => /AUTH_USERNAME and AUTH_PASSWORD/.test(line)).length, 1);
    assert.equal(warnings.filter((line) => /SECRET_TOKEN is not set/.test(line)).length, 1);
  } finally {
    assert.equal(await service.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  }
});
