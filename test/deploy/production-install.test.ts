// The production install as people type it: the README's command, read from the README, run on
// a clean copy of this tree (uncommitted work included) with the machine's own Node and npm and
// NODE_ENV=production already set; then `npm start` in production answers /ready and exits 0 on
// SIGTERM. A plain `npm ci --omit=dev` stops with that command instead of "tsc: not found".
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { machinePath, ROOT, readRepositoryFile } from "../support/deploy.js";
import { describe } from "../support/describe.js";
import { startService } from "../support/service.js";

const INSTALL_MINUTES = 5;

/** The fenced block after the README's production:install marker. */
function readmeCommand(): string {
  const readme = readRepositoryFile("README.md");
  const at = readme.indexOf("<!-- production:install");
  assert.ok(at >= 0, "README has no production:install marker");
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))?.[1]?.trim();
  assert.ok(block && !block.includes("\n"), "one command, on one line");
  return block;
}
const COMMAND = readmeCommand();

/**
 * What an operator's shell has: the machine's PATH and HOME (its npm settings), and how it
 * reaches the registry (proxies, extra certificate authorities), nothing from npm or the suite.
 */
function operatorEnvironment(): Record<string, string> {
  const network = Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      /^((https?|no)_proxy|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR))$/i.test(entry[0]) &&
      entry[1] !== undefined,
  );
  return { ...Object.fromEntries(network), PATH: machinePath(), HOME: process.env.HOME ?? "/" };
}

/** The machine's Node, older than the `engines` minimum or not. */
function machineNodeIsOlder(): boolean {
  const version = execFileSync("node", ["--version"], {
    encoding: "utf8",
    env: operatorEnvironment(),
  });
  const [major = 0, minor = 0] = version.slice(1).split(".").map(Number);
  return major < 22 || (major === 22 && minor < 16);
}

/** A shell command in the copy, as typed; its exit code and everything it printed. */
async function run(command: string, cwd: string, env: Record<string, string>) {
  try {
    const { stdout, stderr } = await promisify(execFile)("sh", ["-c", `${command} 2>&1`], {
      cwd,
      env,
      timeout: INSTALL_MINUTES * 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string; killed?: boolean };
    if (failed.killed) throw new Error(`${command}: not done in ${INSTALL_MINUTES} minutes`);
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

describe("the production install", { timeout: 2 * INSTALL_MINUTES * 60_000 + 60_000 }, () => {
  let copy: string;

  before(() => {
    copy = mkdtempSync(join(tmpdir(), "books-install-"));
    // The working tree as git sees it: tracked files and new ones not ignored, so no
    // node_modules, no dist, and uncommitted work counts.
    const files = execFileSync(
      "git",
      ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
      { cwd: ROOT, encoding: "utf8" },
    )
      .split("\0")
      .filter((file) => file !== "" && existsSync(join(ROOT, file)));
    for (const file of files) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      cpSync(join(ROOT, file), join(copy, file));
    }
  });

  after(() => rmSync(copy, { recursive: true, force: true }));

  test("docs/operations.md and the build's refusal give the README's command", () => {
    assert.ok(readRepositoryFile("docs/operations.md").includes(COMMAND));
    assert.ok(readRepositoryFile("scripts/build-tools.mjs").includes(COMMAND));
  });

  test("a plain `npm ci --omit=dev` stops with that command, not `tsc: not found`", async () => {
    const install = await run("npm ci --omit=dev", copy, operatorEnvironment());
    assert.notEqual(install.code, 0);
    assert.doesNotMatch(install.output, /tsc: not found/);
    assert.ok(install.output.includes(`  ${COMMAND}\n`), install.output);
    assert.ok(install.output.includes("docs/operations.md"));
  });

  test("the README's command, with NODE_ENV=production set, installs a tree that serves", async (t) => {
    const started = Date.now();
    const install = await run(COMMAND, copy, { ...operatorEnvironment(), NODE_ENV: "production" });
    assert.equal(install.code, 0, install.output);
    const size = execFileSync("du", ["-sm", "--exclude=.runtime", join(copy, "node_modules")], {
      encoding: "utf8",
    }).split("\t")[0];
    t.diagnostic(`${COMMAND}: ${Math.round((Date.now() - started) / 1000)} s, ${size} MB`);

    // What the service runs was built; what only the build needs is gone.
    assert.ok(existsSync(join(copy, "dist", "server", "main.js")));
    assert.ok(existsSync(join(copy, "dist", "web", "index.html")));
    for (const devOnly of ["typescript", "vite", "tsx", "@biomejs/biome"]) {
      assert.ok(!existsSync(join(copy, "node_modules", devOnly)), `${devOnly} was kept`);
    }
    // On a Node older than `engines`, the fetched Node survives the prune, and runs.
    if (machineNodeIsOlder()) {
      const node = join(copy, "node_modules", ".bin", "node");
      assert.match(execFileSync(node, ["--version"], { encoding: "utf8" }), /^v26\./);
    }

    const data = mkdtempSync(join(tmpdir(), "books-install-data-"));
    try {
      const service = await startService(
        {
          ...operatorEnvironment(),
          NODE_ENV: "production",
          AUTH_USERNAME: "librarian",
          AUTH_PASSWORD: "install-test-password-31f0",
          SECRET_TOKEN: "install-test-secret-of-more-than-32-bytes",
          DB_URL: `sqlite:${join(data, "books.db")}`,
          HOST: "127.0.0.1",
          PORT: "0",
        },
        { cwd: copy },
      );
      const ready = await fetch(`${service.url}/ready`);
      assert.deepEqual(await ready.json(), { status: 200, message: "Ready", data: null });
      assert.equal(await service.stop("SIGTERM"), 0);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
