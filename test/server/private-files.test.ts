// The catalogue's files are its user's alone, whatever the umask it was started with: the
// database with its -wal and -shm, the scheduled and manual backups, an export, each 0600 in
// folders of 0700 that another local user cannot read nor lock; a BACKUP_DIR or database
// folder that others may write stops start-up with one line.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { CLI, until } from "../backup/catalogues.js";
import { describe } from "../support/describe.js";
import { addLocalUser, type LocalUser, localUserSkip } from "../support/local-user.js";
import {
  login,
  request,
  type Service,
  startExpectingFailure,
  startService,
} from "../support/service.js";

const CREDENTIALS = { username: "private", password: "private-files-test-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: "private-files-test-secret-of-32-bytes-at-least",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  LOG_LEVEL: "info",
};
/** As a shell with the common umask starts a program. */
const UMASK_022 = ["sh", "-c", 'umask 022; exec "$@"', "sh"] as const;

const modeOf = (path: string) => lstatSync(path).mode & 0o7777;
const octal = (mode: number) => mode.toString(8).padStart(4, "0");
const backupsWritten = (service: Service) =>
  service
    .output()
    .split("\n")
    .filter((line) => line.includes('"msg":"backup written"')).length;

/** The command line under umask 022, to its end. */
function cliUnderUmask022(args: string[]): Promise<{ code: number; stderr: string }> {
  const [sh, ...shArgs] = UMASK_022;
  return new Promise((resolve) => {
    execFile(
      sh,
      [...shArgs, process.execPath, CLI, ...args],
      { env: { PATH: process.env.PATH ?? "" }, timeout: 60_000 },
      (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
}

/** Every file and folder under `top` with its mode, as `path mode`. */
function modesUnder(top: string): { files: string[]; folders: string[] } {
  const files: string[] = [];
  const folders: string[] = [];
  for (const entry of readdirSync(top, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    (entry.isDirectory() ? folders : files).push(`${path} ${octal(modeOf(path))}`);
  }
  return { files, folders };
}

/** The one line of a failed start-up that says why. */
function failureLine(output: string): string {
  const lines = output.split("\n").filter((line) => line.includes("start-up failed"));
  assert.equal(lines.length, 1, `one failure line expected in:\n${output}`);
  return lines[0] as string;
}

describe("under umask 022, the service's and the command line's files", () => {
  let top: string;
  let other: LocalUser | undefined;
  let service: Service;
  before(async () => {
    // A folder others may enter (a home, /srv): what is private must be so by its own mode.
    top = mkdtempSync(join(tmpdir(), "books-private-"));
    chmodSync(top, 0o755);
    service = await startService(
      {
        ...ENV,
        DB_URL: `sqlite:${join(top, "data", "books.db")}`,
        BACKUP_DIR: join(top, "backups", "scheduled"),
        BACKUP_INTERVAL_SECONDS: "1",
      },
      { command: [...UMASK_022, process.execPath, "dist/server/main.js"] },
    );
    const token = await login(service, CREDENTIALS);
    const book = { title: "Private", author: "Owner", year: 2026 };
    assert.equal((await request(service, "POST", "/book", token, book)).status, 201);
    await until(() => backupsWritten(service) >= 2);
    const manual = await cliUnderUmask022([
      "backup",
      "--db",
      `sqlite:${join(top, "data", "books.db")}`,
      join(top, "manual.backup"),
    ]);
    assert.equal(manual.code, 0, manual.stderr);
    const exported = await cliUnderUmask022([
      "export",
      "--url",
      service.url,
      "--username",
      CREDENTIALS.username,
      "--password",
      CREDENTIALS.password,
      "-o",
      join(top, "export.json"),
    ]);
    assert.equal(exported.code, 0, exported.stderr);
  });
  after(async () => {
    assert.equal(await service.stop(), 0);
    other?.remove();
    rmSync(top, { recursive: true, force: true });
  });

  test("are 0600, and the folders it made 0700", () => {
    const { files, folders } = modesUnder(top);
    for (const name of ["books.db", "books.db-wal", "books.db-shm"]) {
      assert.ok(files.includes(`${join(top, "data", name)} 0600`), `${name} in ${files}`);
    }
    assert.ok(files.some((file) => /scheduled\/books-\d{8}T\d{6}Z\.backup 0600$/.test(file)));
    assert.ok(files.includes(`${join(top, "manual.backup")} 0600`), String(files));
    assert.ok(files.includes(`${join(top, "export.json")} 0600`), String(files));
    assert.deepEqual(
      files.filter((file) => !file.endsWith(" 0600")),
      [],
      "every file private",
    );
    assert.deepEqual(folders.sort(), [
      `${join(top, "backups")} 0700`,
      `${join(top, "backups", "scheduled")} 0700`,
      `${join(top, "data")} 0700`,
    ]);
  });

  test("another local user can read none of them, nor open -shm to lock it", {
    skip: localUserSkip,
  }, () => {
    other = addLocalUser();
    const user = other;
    // The user is a real one: it reads what is meant for everyone.
    assert.ok(user.succeeds(["test", "-x", top]));
    const [scheduled] = readdirSync(join(top, "backups", "scheduled"));
    for (const file of [
      join(top, "data", "books.db"),
      join(top, "data", "books.db-wal"),
      join(top, "backups", "scheduled", scheduled as string),
      join(top, "manual.backup"),
      join(top, "export.json"),
    ]) {
      assert.equal(user.succeeds(["cat", file]), false, `${file} is read by another user`);
    }
    // A read lock on -shm (which stopped every write) needs the file open first.
    const shm = join(top, "data", "books.db-shm");
    assert.equal(user.succeeds(["sh", "-c", 'exec 3<"$1"', "sh", shm]), false);
    assert.equal(user.succeeds(["ls", join(top, "data")]), false);
  });
});

describe("folders and files there before start-up", () => {
  let top: string;
  before(() => {
    top = mkdtempSync(join(tmpdir(), "books-shared-folder-"));
  });
  after(() => rmSync(top, { recursive: true, force: true }));

  const folder = (name: string, mode: number) => {
    const path = join(top, name);
    mkdirSync(path);
    chmodSync(path, mode);
    return path;
  };
  const startIn = (env: Record<string, string>) =>
    startExpectingFailure(
      { ...ENV, DB_URL: `sqlite:${join(top, "db", "books.db")}`, ...env },
      10_000,
    );

  for (const mode of [0o777, 0o1777, 0o770]) {
    test(`a BACKUP_DIR of mode ${octal(mode)}: one line, exit 1`, async () => {
      const dir = folder(`backups-${octal(mode)}`, mode);
      const run = await startIn({ BACKUP_DIR: dir });
      assert.equal(run.code, 1, run.output);
      assert.equal(
        failureLine(run.output),
        `book-catalogue: start-up failed: invalid configuration: BACKUP_DIR ${dir} may be written by other users (mode ${octal(mode)}): chmod go-w ${dir}, or use a folder of the service's user alone`,
      );
      assert.equal(modeOf(dir), mode, "left as it was");
    });
  }

  test("a database in a folder of mode 0777: one line, exit 1, no database made", async () => {
    const dir = folder("open-db", 0o777);
    const run = await startIn({ DB_URL: `sqlite:${join(dir, "books.db")}` });
    assert.equal(run.code, 1, run.output);
    assert.match(
      failureLine(run.output),
      /^book-catalogue: start-up failed: cannot prepare the SQLite store at .*books\.db: its folder .* may be written by other users \(mode 0777\): chmod go-w /,
    );
    assert.deepEqual(readdirSync(dir), []);
  });

  test("a BACKUP_DIR of another user's: one line, exit 1", { skip: localUserSkip }, async () => {
    const user = addLocalUser();
    try {
      const dir = folder("theirs", 0o755);
      chownSync(dir, user.uid, user.uid);
      const run = await startIn({ BACKUP_DIR: dir });
      assert.equal(run.code, 1, run.output);
      assert.equal(
        failureLine(run.output),
        `book-catalogue: start-up failed: invalid configuration: BACKUP_DIR ${dir} belongs to another user (uid ${user.uid}): use a folder of the service's user`,
      );
    } finally {
      rmSync(join(top, "theirs"), { recursive: true, force: true });
      user.remove();
    }
  });

  test("folders the operator made 0750 serve, and are left 0750", async () => {
    const db = folder("db-0750", 0o750);
    const backups = folder("backups-0750", 0o750);
    const service = await startService({
      ...ENV,
      DB_URL: `sqlite:${join(db, "books.db")}`,
      BACKUP_DIR: backups,
      BACKUP_INTERVAL_SECONDS: "3600",
    });
    try {
      await until(() => backupsWritten(service) === 1);
    } finally {
      assert.equal(await service.stop(), 0);
    }
    assert.equal(modeOf(db), 0o750);
    assert.equal(modeOf(backups), 0o750);
  });

  test("a database others may read (an older release's) serves, with a warning, its mode left", async () => {
    const path = join(folder("older", 0o700), "books.db");
    writeFileSync(path, "");
    chmodSync(path, 0o644);
    const service = await startService({ ...ENV, DB_URL: `sqlite:${path}` });
    assert.equal(await service.stop(), 0);
    const warning = service
      .output()
      .split("\n")
      .filter((line) => line.includes("may be read by other users"))
      .map((line) => JSON.parse(line));
    assert.equal(warning.length, 1, service.output());
    assert.equal(warning[0].level, 40);
    assert.equal(
      warning[0].msg,
      `the database ${path} may be read by other users (mode 0644), and its -shm locked to stop every write: chmod o-rwx ${path} ${path}-wal ${path}-shm`,
    );
    assert.equal(modeOf(path), 0o644);
  });
});
