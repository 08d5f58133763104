// The release's single executable, as an operator runs it: alone in an empty folder (a link to
// the one built, not a copy of its 180 MB), with no Node on the PATH, it serves the catalogue
// and its page on the embedded store (with one process and with two workers) and runs the
// CLI's commands; and the shipped systemd unit runs it. It carries its own Node, so it runs on
// CI's first Node line only (node-lines.ts).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import {
  filledEnvExample,
  machinePath,
  ROOT,
  readRepositoryFile,
  UNIT,
  unitCommand,
  unitSection,
} from "../support/deploy.js";
import { describe } from "../support/describe.js";
import { login, request, type Service, startService } from "../support/service.js";

const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const CREDENTIALS = { username: "librarian", password: "single-file-password" };
const FILE = `book-catalogue-${version}-linux-x64`;
/** No folder at all: no Node, nor anything else, to be found on it. */
const NO_PATH = { PATH: "/nonexistent" };

describe("the release's single executable", () => {
  const dir = mkdtempSync(join(tmpdir(), "book-catalogue-single-"));
  const release = join(dir, "release");

  before(async () => {
    await run(process.execPath, ["scripts/release.mjs", "--out", release], { cwd: ROOT });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("SHA256SUMS names it beside the package", () => {
    const sums = readFileSync(join(release, "SHA256SUMS"), "utf8");
    assert.match(sums, new RegExp(`^[0-9a-f]{64}  ${FILE}$`, "m"));
    assert.ok(statSync(join(release, FILE)).mode & 0o100, "executable");
  });

  test("the shipped systemd unit's command runs it, put in the folder as `book-catalogue`", async () => {
    const work = join(dir, "unit");
    mkdirSync(work);
    linkSync(join(release, FILE), join(work, "book-catalogue"));
    const { METRICS_PORT: _, ...settings } = filledEnvExample(work);
    const unit = unitSection(readRepositoryFile(UNIT), "Service");
    const service = await startService(
      { ...settings, PATH: machinePath(), PORT: "0" },
      { command: unitCommand(unit), cwd: work },
    );
    // The shell exec'd the file: it is the main process, and the SIGTERM is the server's.
    assert.equal(readlinkSync(`/proc/${service.process.pid}/exe`), join(work, "book-catalogue"));
    assert.equal((await request(service, "GET", "/ready")).status, 200);
    assert.equal(await service.stop("SIGTERM"), 0);
  });

  for (const workers of ["1", "2"]) {
    test(`alone in an empty folder, no Node on the PATH, WORKERS=${workers}: serves, backs up, exits 0`, async () => {
      const work = join(dir, `work-${workers}`);
      mkdirSync(work);
      const file = join(work, FILE);
      linkSync(join(release, FILE), file);
      let service: Service | undefined;
      try {
        service = await startService(
          {
            ...NO_PATH,
            HOST: "127.0.0.1",
            PORT: "0",
            WORKERS: workers,
            SECRET_TOKEN: "single-file-secret-of-more-than-32-bytes",
            AUTH_USERNAME: CREDENTIALS.username,
            AUTH_PASSWORD: CREDENTIALS.password,
          },
          { command: [file, "serve"], cwd: work },
        );
        assert.equal((await request(service, "GET", "/ready")).status, 200);
        assert.deepEqual((await request(service, "GET", "/health")).body.data, { version });
        const page = await fetch(`${service.url}/`);
        assert.match(await page.text(), /<title>Book catalogue<\/title>/);
        const token = await login(service, CREDENTIALS);
        const book = { title: "Dune", author: "Frank Herbert", year: 1965 };
        // A create goes through the store's writer thread; a count through its count thread.
        assert.equal((await request(service, "POST", "/book", token, book)).status, 201);
        const counted = await fetch(`${service.url}/books`, {
          headers: { authorization: token, prefer: "count=exact" },
        });
        assert.equal(counted.headers.get("x-total-count"), "1");
        const backup = join(work, "catalogue.backup");
        const db = `sqlite:${join(work, "data", "books.db")}`;
        await run(file, ["backup", backup, "--db", db], { env: NO_PATH, cwd: work });
        const checked = await run(file, ["backup", "--check", backup], { env: NO_PATH });
        assert.match(checked.stdout, /a complete backup of 1 book/);
        // The API's commands, and a restore into a new catalogue.
        const connection = ["--url", service.url, "--username", CREDENTIALS.username];
        const withPassword = { ...NO_PATH, AUTH_PASSWORD: CREDENTIALS.password };
        const exported = await run(file, ["export", ...connection], { env: withPassword });
        assert.deepEqual(
          JSON.parse(exported.stdout).map((b: { title: string }) => b.title),
          ["Dune"],
        );
        const restored = `sqlite:${join(work, "restored", "books.db")}`;
        await run(file, ["restore", backup, "--db", restored], { env: NO_PATH, cwd: work });
        const again = await run(file, ["backup", join(work, "again.backup"), "--db", restored], {
          env: NO_PATH,
        });
        assert.match(again.stdout, /backed up 1 book/);
        assert.equal(await service.stop(), 0);
        service = undefined;
      } finally {
        await service?.stop("SIGKILL");
      }
    });
  }
});
