// A backup or an export is written under a temporary name no one can guess, in a file made
// for it alone: a link planted in the folder is never written through. The old names (the
// writer's pid, the backup's time) are planted as links to a file of the service's user, and
// the file stays as it was.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { partialName } from "../../src/backup/write.js";
import { createPrivateFile, temporaryName } from "../../src/private-files.js";
import { describe } from "../support/describe.js";
import { login, request, type Service, startService } from "../support/service.js";
import { CLI, cli, until } from "./catalogues.js";

const CREDENTIALS = { username: "temporary", password: "temporary-files-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: "temporary-files-test-secret-of-32-bytes",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  LOG_LEVEL: "info",
};
const PRECIOUS = "a file of the service's user, not to be overwritten\n";

/** When the old scheme named a scheduled backup started at `at`. */
const stampAt = (at: number) =>
  new Date(at).toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");

/**
 * The command line, its pid known before it starts (sh execs it after a pause): so a link can
 * be planted at every name the old scheme would give its temporary file.
 */
async function cliWithLinkAt(args: string[], oldName: (pid: number) => string, target: string) {
  const child = spawn("sh", ["-c", 'sleep 0.3; exec "$@"', "sh", process.execPath, CLI, ...args], {
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  symlinkSync(target, oldName(child.pid as number));
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  return { code, stderr };
}

describe("temporary files", () => {
  let dir: string;
  let victim: string;
  let dbUrl: string;
  let service: Service;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "books-temporary-"));
    victim = join(dir, "precious.txt");
    writeFileSync(victim, PRECIOUS);
    dbUrl = `sqlite:${join(dir, "data", "books.db")}`;
    mkdirSync(join(dir, "backups"), { mode: 0o700 });
    service = await startService(
      {
        ...ENV,
        DB_URL: dbUrl,
        BACKUP_DIR: join(dir, "backups"),
        BACKUP_INTERVAL_SECONDS: "1",
      },
      { direct: true },
    );
    const token = await login(service, CREDENTIALS);
    const book = { title: "Linked", author: "Nobody", year: 2026 };
    assert.equal((await request(service, "POST", "/book", token, book)).status, 201);
  });
  after(async () => {
    assert.equal(await service.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  });

  test("are created, never opened: an existing link or file there is refused", async () => {
    const link = join(dir, "planted-link");
    symlinkSync(victim, link);
    await assert.rejects(createPrivateFile(link), { code: "EEXIST" });
    const dangling = join(dir, "planted-dangling");
    symlinkSync(join(dir, "not-yet"), dangling);
    await assert.rejects(createPrivateFile(dangling), { code: "EEXIST" });
    await assert.rejects(createPrivateFile(victim), { code: "EEXIST" });
    assert.equal(readFileSync(victim, "utf8"), PRECIOUS);
    assert.throws(() => lstatSync(join(dir, "not-yet")), { code: "ENOENT" });
    const fresh = join(dir, "fresh");
    await (await createPrivateFile(fresh)).close();
    assert.equal(lstatSync(fresh).mode & 0o777, 0o600);
  });

  test("have names no one can guess: new each time, without the pid", () => {
    const file = join(dir, "books.backup");
    const names = new Set(Array.from({ length: 100 }, () => partialName(file)));
    assert.equal(names.size, 100);
    for (const name of names) {
      assert.equal(dirname(name), dir);
      assert.match(basename(name), /^\.books\.backup\.[0-9a-f]{24}\.partial$/);
      // The old names ended in `.<pid>.partial`; 24 random hex digits may hold the pid's
      // digits by chance, so only the pid as a segment of its own counts.
      assert.ok(!name.includes(`.${process.pid}.`));
    }
    assert.notEqual(temporaryName(file, "tmp"), temporaryName(file, "tmp"));
  });

  test("scheduled backups do not write through links at the old names", async () => {
    const pid = service.process.pid as number;
    const now = Date.now();
    for (let second = -1; second <= 10; second++) {
      const stamp = stampAt(now + second * 1000);
      symlinkSync(victim, join(dir, "backups", `.books-${stamp}.backup.${pid}.partial`));
    }
    const written = () =>
      service
        .output()
        .split("\n")
        .filter((line) => line.includes('"msg":"backup written"'));
    const already = written().length;
    await until(() => written().length >= already + 3);
    assert.equal(readFileSync(victim, "utf8"), PRECIOUS);
    const newest = JSON.parse(written().at(-1) as string).file as string;
    assert.ok(lstatSync(newest).isFile(), "a backup, not a link");
    assert.equal((await cli(["backup", "--check", newest])).code, 0);
  });

  test("book-catalogue backup does not write through a link at its old name", async () => {
    const file = join(dir, "manual.backup");
    const run = await cliWithLinkAt(
      ["backup", "--db", dbUrl, file],
      (pid) => join(dir, `.manual.backup.${pid}.partial`),
      victim,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(victim, "utf8"), PRECIOUS);
    assert.ok(lstatSync(file).isFile(), "a backup, not a link");
    assert.equal((await cli(["backup", "--check", file])).code, 0);
  });

  test("book-catalogue export -o does not write through a link at its old name", async () => {
    const file = join(dir, "export.json");
    const connection = ["--url", service.url, "--username", CREDENTIALS.username];
    const run = await cliWithLinkAt(
      ["export", ...connection, "--password", CREDENTIALS.password, "-o", file],
      (pid) => `${file}.${pid}.tmp`,
      victim,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(victim, "utf8"), PRECIOUS);
    assert.ok(lstatSync(file).isFile(), "an export, not a link");
    assert.equal(JSON.parse(readFileSync(file, "utf8"))[0].title, "Linked");
  });
});
