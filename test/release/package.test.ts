// The release's package, as an operator installs it: `npm run release`'s tarball installed into
// an empty prefix on this Node line, nothing built there, and its `book-catalogue` command
// serving a fresh catalogue, backing it up and checking the backup; and unpacked into a folder
// and installed there with `npm ci --omit=dev`, the layout of the systemd unit.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { ROOT } from "../support/deploy.js";
import { describe } from "../support/describe.js";
import { login, request, type Service, startService } from "../support/service.js";

const run = promisify(execFile);
const { name, version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const CREDENTIALS = { username: "librarian", password: "release-test-password" };
/** This Node line first, then the system's programs: the command runs on the line under test. */
const PATH = `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;
/**
 * A download from the registry that stalls is given up after 30 s and tried again, not waited
 * for: npm's own bound is 5 minutes a try (a stalled one held this suite past its 10 minutes).
 */
const NO_STALL = ["--no-audit", "--fetch-timeout=30000", "--fetch-retries=3"];
/**
 * The npm run here, in an environment of its own, reaches the registry as the npm that runs the
 * suite does: its CA (npm hands a script its `npm_config_cafile`) and proxies. Without them, a
 * registry reached through a TLS-inspecting proxy refuses every download, tried until the
 * test's time runs out, unless npm's cache already holds the packages.
 */
const NPM_ENV = {
  PATH,
  HOME: process.env.HOME ?? tmpdir(),
  ...Object.fromEntries(
    Object.entries(process.env).filter(([key]) =>
      /^(npm_config_(cafile|ca|registry|strict_ssl|https?_proxy|proxy|noproxy)|NODE_EXTRA_CA_CERTS|(https?|no)_proxy|(HTTPS?|NO)_PROXY)$/.test(
        key,
      ),
    ),
  ),
};

describe("the release's package", () => {
  const dir = mkdtempSync(join(tmpdir(), "book-catalogue-release-"));
  const prefix = join(dir, "prefix");
  const command = join(prefix, "bin", "book-catalogue");
  const tarball = join(dir, "release", `${name}-${version}.tgz`);

  before(async () => {
    // The tree is built (npm test's pretest): the script packs that build.
    // The package only: the single executable has a test of its own (single-file.test.ts).
    const out = join(dir, "release");
    await run(process.execPath, ["scripts/release.mjs", "--out", out, "--package-only"], {
      cwd: ROOT,
    });
    await run(
      "npm",
      ["install", "--global", "--prefix", prefix, tarball, "--prefer-offline", ...NO_STALL],
      { env: NPM_ENV, cwd: dir },
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("SHA256SUMS names the package with its digest", () => {
    const digest = createHash("sha256").update(readFileSync(tarball)).digest("hex");
    const sums = readFileSync(join(dir, "release", "SHA256SUMS"), "utf8");
    assert.equal(sums, `${digest}  ${name}-${version}.tgz\n`);
  });

  test("installs with nothing to build, and `book-catalogue --version` names it", async () => {
    const { stdout } = await run(command, ["--version"], { env: { PATH } });
    assert.equal(stdout, `${version}\n`);
    const installed = join(prefix, "lib", "node_modules", name);
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    assert.deepEqual(Object.keys(manifest.scripts), ["start"]);
    // The versions the lockfile names, and none of the development dependencies.
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
    const fastify = JSON.parse(
      readFileSync(join(installed, "node_modules", "fastify", "package.json"), "utf8"),
    );
    assert.equal(fastify.version, lock.packages["node_modules/fastify"].version);
    for (const dev of Object.keys(manifest.devDependencies)) {
      assert.ok(!existsSync(join(installed, "node_modules", dev)), `${dev} is not installed`);
    }
  });

  test("unpacked into a folder, `npm ci --omit=dev` installs what the systemd unit runs", async () => {
    const opt = join(dir, "opt");
    mkdirSync(opt);
    await run("tar", ["xzf", tarball, "--strip-components=1", "-C", opt]);
    await run("npm", ["ci", "--omit=dev", "--prefer-offline", ...NO_STALL], {
      env: NPM_ENV,
      cwd: opt,
    });
    // The unit's ExecStart, and the command's wrapper (deploy/), start from these.
    for (const entry of ["dist/server/main.js", "dist/cli/main.js", "dist/web/index.html"]) {
      assert.ok(existsSync(join(opt, entry)), entry);
    }
    assert.ok(!existsSync(join(opt, "node_modules", "typescript")));
    const { stdout } = await run(process.execPath, ["dist/cli/main.js", "--version"], { cwd: opt });
    assert.equal(stdout, `${version}\n`);
  });

  test("`book-catalogue serve` in an empty folder: ready, a token, a book, a backup, SIGTERM", async () => {
    const work = join(dir, "work");
    mkdirSync(work);
    const db = `sqlite:${join(work, "data", "books.db")}`;
    let service: Service | undefined;
    try {
      service = await startService(
        {
          PATH,
          HOST: "127.0.0.1",
          PORT: "0",
          SECRET_TOKEN: "release-test-secret-of-more-than-32-bytes",
          AUTH_USERNAME: CREDENTIALS.username,
          AUTH_PASSWORD: CREDENTIALS.password,
        },
        { command: [command, "serve"], cwd: work },
      );
      assert.equal((await request(service, "GET", "/ready")).status, 200);
      assert.deepEqual((await request(service, "GET", "/health")).body.data, { version });
      const token = await login(service, CREDENTIALS);
      const book = { title: "Dune", author: "Frank Herbert", year: 1965 };
      assert.equal((await request(service, "POST", "/book", token, book)).status, 201);
      const backup = join(work, "catalogue.backup");
      await run(command, ["backup", backup, "--db", db], { env: { PATH }, cwd: work });
      const checked = await run(command, ["backup", "--check", backup], { env: { PATH } });
      assert.match(checked.stdout, /a complete backup of 1 book/);
      assert.equal(await service.stop(), 0);
      service = undefined;
    } finally {
      await service?.stop("SIGKILL");
    }
  });
});
