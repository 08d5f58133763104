// A unit, pm2 or a container that runs the entries on the system's Node, older than
// package.json's engines (Node 20 on Debian and Ubuntu LTS): one line naming the Node needed
// and what to run instead, and exit 1, not node:sqlite's stack.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { describe } from "../support/describe.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const WANTED: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).engines.node;
const MINIMUM = /^>=(\d+)\.(\d+)$/.exec(WANTED)?.slice(1).map(Number) ?? [];

/** The system's Node when it is older than engines (under CI, /usr/bin/node is Node 20). */
function olderNode(): { path: string; version: string } | undefined {
  const path = "/usr/bin/node";
  const run = spawnSync(path, ["--version"], { encoding: "utf8" });
  if (run.status !== 0) return undefined;
  const version = run.stdout.trim();
  const [major = 0, minor = 0] = version.slice(1).split(".").map(Number);
  const [needMajor = 0, needMinor = 0] = MINIMUM;
  const older = major < needMajor || (major === needMajor && minor < needMinor);
  return older ? { path, version } : undefined;
}

const OLD = olderNode();
const skip = OLD === undefined && process.env.CI !== "true" && "no Node older than engines here";

describe(`on ${OLD?.version ?? "a Node older than engines"}`, { skip }, () => {
  for (const [entry, ...args] of [
    ["dist/server/main.js"],
    ["dist/cli/main.js", "serve"],
    ["dist/cli/main.js", "backup", "books.backup"],
    ["dist/cli/main.js", "import", "books.csv"],
  ] as const) {
    test(`node ${[entry, ...args].join(" ")}: one line naming the Node needed and npm start, exit 1`, () => {
      assert.ok(OLD, "under CI, /usr/bin/node must be a Node older than engines");
      const run = spawnSync(OLD.path, [entry, ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
        encoding: "utf8",
      });
      assert.equal(run.status, 1, run.stderr);
      assert.equal(run.stdout, "");
      assert.equal(
        run.stderr,
        `book-catalogue: Node ${OLD.version} is too old: this service needs Node ${WANTED} (package.json engines); run it with npm start, which uses the Node npm ci fetched, or install Node ${MINIMUM.join(".")} or later\n`,
      );
    });
  }
});
