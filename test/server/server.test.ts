// Black-box: the real `npm start` as a child process, as an operator runs it.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Messages } from "../../src/http/envelope.js";
import type { Book } from "../../src/rules/book.js";
import { describe } from "../support/describe.js";
import {
  DEFAULT_TEST_DATABASE_URL,
  freshPostgresSchema,
  storesUnderTest,
} from "../support/helpers.js";
import { pgConnect } from "../support/pg.js";
import {
  freePort,
  login,
  request,
  startExpectingFailure,
  startService,
} from "../support/service.js";

const SECRET = "black-box-secret-of-more-than-32-bytes";
const CREDENTIALS = { username: "librarian", password: "bb-password-7f3a" };
const BASE_ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: SECRET,
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
};

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PACKAGE_VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
const start = (env: Record<string, string>) => startService({ ...BASE_ENV, ...env });
const startFailing = (env: Record<string, string>, timeoutMs?: number) =>
  startExpectingFailure({ ...BASE_ENV, ...env }, timeoutMs);

/** The line of the output that says why start-up failed. */
function failureLine(output: string): string {
  const lines = output.split("\n").filter((line) => line.includes("start-up failed"));
  assert.equal(lines.length, 1, `one failure line expected in:\n${output}`);
  return lines[0] as string;
}

const tempDirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "books-bb-"));
  tempDirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

const kinds = await storesUnderTest();
const postgresSkip = kinds.find((k) => k.name === "postgres")?.skip ?? "no PostgreSQL";

for (const kind of kinds) {
  describe(`npm start on ${kind.name}`, { skip: kind.skip }, () => {
    test("serves the catalogue and its page, keeps its data across a restart, and exits 0 on SIGTERM", async () => {
      const schema = kind.name === "postgres" ? await freshPostgresSchema() : undefined;
      const dbUrl = schema?.dbUrl ?? `sqlite:${join(tempDir(), "data", "books.db")}`;

      const first = await start({ DB_URL: dbUrl });
      assert.deepEqual((await request(first, "GET", "/health")).body, {
        status: 200,
        message: Messages.healthy,
        data: { version: PACKAGE_VERSION },
      });
      assert.equal((await request(first, "GET", "/ready")).status, 200);
      const page = await fetch(`${first.url}/`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<title>Book catalogue<\/title>/);
      const token = await login(first, CREDENTIALS);
      const created = await request<Book>(first, "POST", "/book", token, {
        title: "Emma",
        author: "Jane Austen",
        year: 1815,
      });
      assert.equal(created.status, 201);
      const id = created.body.data?.id;
      const updated = await request(first, "PUT", `/book/${id}`, token, { year: 1816 });
      assert.equal(updated.status, 200);
      assert.equal(await first.stop("SIGTERM"), 0);
      assert.match(first.output(), /"msg":"stopped"/);

      const second = await start({ DB_URL: dbUrl });
      // Same SECRET_TOKEN: the token from before the restart still works.
      const read = await request(second, "GET", `/book/${id}`, token);
      assert.deepEqual(read.body.data, {
        id,
        title: "Emma",
        author: "Jane Austen",
        year: 1816,
      });
      assert.equal(await second.stop("SIGINT"), 0);
      await schema?.drop();

      for (const secret of [CREDENTIALS.password, SECRET, token]) {
        assert.ok(
          !first.output().includes(secret) && !second.output().includes(secret),
          "secret in logs",
        );
      }
    });
  });
}

describe("npm start speaks to people", () => {
  test("outside production, one plain line names the page, the docs and the API", async () => {
    const service = await start({ DB_URL: "sqlite::memory:" });
    const port = new URL(service.url).port;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(await service.stop(), 0);
    const lines = service
      .output()
      .split("\n")
      .filter((line) => !line.startsWith("{"));
    assert.ok(
      lines.includes(
        `Book catalogue ${PACKAGE_VERSION} ready: the page at http://localhost:${port}/, the API docs at http://localhost:${port}/docs, the API at http://localhost:${port}/books (Ctrl-C stops it)`,
      ),
      service.output(),
    );
  });

  test("in production, every line is JSON", async () => {
    // The server itself: npm adds lines of its own.
    const service = await startService(
      { ...BASE_ENV, DB_URL: "sqlite::memory:", NODE_ENV: "production" },
      { direct: true },
    );
    assert.equal(await service.stop(), 0);
    const lines = service
      .output()
      .split("\n")
      // Node 22's own notice that node:sqlite is experimental is not the service's line.
      .filter(
        (line) =>
          line !== "" &&
          !/^\((node:\d+\) ExperimentalWarning: SQLite|Use `node --trace-warnings)/.test(line),
      );
    assert.ok(lines.length > 0);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
    // The start-up line says which version runs.
    const ready = lines.map((line) => JSON.parse(line)).find((e) => e.msg === "store ready");
    assert.equal(ready?.serviceVersion, PACKAGE_VERSION, service.output());
  });

  for (const workers of ["1", "2"]) {
    test(`a port in use is named, with PORT to choose another (WORKERS=${workers})`, async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
      const { port } = taken.address() as { port: number };
      const { code, output, ms } = await startFailing({
        DB_URL: `sqlite:${join(tempDir(), "books.db")}`,
        PORT: String(port),
        WORKERS: workers,
      });
      taken.close();
      assert.equal(code, 1);
      // With two workers, each may say it.
      const line = output.split("\n").find((l) => l.includes("start-up failed")) ?? output;
      assert.match(
        line,
        new RegExp(
          `port ${port} is in use on 127\\.0\\.0\\.1 .*choose another port, e\\.g\\. PORT=${port + 1}`,
        ),
      );
      // Not a crash loop: a worker that cannot start is not started again.
      assert.doesNotMatch(output, /workers keep exiting/);
      assert.ok(ms < 15_000, `${ms} ms`);
    });
  }
});

describe("npm start fails fast, with one clear line and a non-zero exit", () => {
  test("an unsupported DB_URL lists the supported forms and hides its password", async () => {
    const run = await startFailing({ DB_URL: "mysql://root:topsecret@db/books" });
    assert.notEqual(run.code, 0);
    const line = failureLine(run.output);
    assert.match(line, /unsupported form/);
    assert.match(line, /sqlite:<path>.*postgres:\/\//);
    assert.ok(!run.output.includes("topsecret"));
  });

  test("a SQLite file that is not a database: the schema cannot be prepared", async () => {
    const path = join(tempDir(), "notes.db");
    writeFileSync(path, "plain text, not a database ".repeat(50));
    const run = await startFailing({ DB_URL: `sqlite:${path}` });
    assert.notEqual(run.code, 0);
    assert.match(failureLine(run.output), /cannot prepare the SQLite store/);
  });

  test("a data folder the service cannot write: one line naming the folder, not SQLite's alone", () => {
    const dir = tempDir();
    chmodSync(dir, 0o755);
    const data = join(dir, "data");
    mkdirSync(data, { mode: 0o700 });
    // A file the service may write, in a folder it may not: SQLite cannot make its -wal there.
    const existing = join(data, "old.db");
    new DatabaseSync(existing).close();
    // Permissions do not stop root (CI): there the folder is a read-only file system instead.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m,mode=700", "tmpfs", data]);
      new DatabaseSync(existing).close();
      execFileSync("mount", ["-o", "remount,ro", data]);
    } else chmodSync(data, 0o555);
    const why = asRoot ? "a read-only file system" : "its permissions";
    const startIn = (path: string) =>
      spawnSync(process.execPath, ["dist/server/main.js"], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", ...BASE_ENV, DB_URL: `sqlite:${path}` },
        encoding: "utf8",
        timeout: 30_000,
      });
    try {
      const fresh = startIn(join(data, "books.db"));
      assert.equal(fresh.status, 1, fresh.stderr);
      assert.equal(
        failureLine(fresh.stderr),
        `book-catalogue: start-up failed: cannot prepare the SQLite store at ${data}/books.db: the folder ${data} is not writable by this user (${why}): the service writes books.db and its -wal and -shm files in ${data}`,
      );
      const run = startIn(existing);
      assert.equal(run.status, 1, run.stderr);
      assert.match(failureLine(run.stderr), new RegExp(`: the folder ${data} is not writable`));
    } finally {
      if (asRoot) execFileSync("umount", ["-l", data]);
      else chmodSync(data, 0o755);
    }
  });

  test("NODE_ENV=production without SECRET_TOKEN, or with a short one", async () => {
    const production = { NODE_ENV: "production", DB_URL: `sqlite:${join(tempDir(), "b.db")}` };
    const missing = await startFailing({ ...production, SECRET_TOKEN: "" });
    assert.notEqual(missing.code, 0);
    assert.match(failureLine(missing.output), /SECRET_TOKEN is required/);
    const short = await startFailing({ ...production, SECRET_TOKEN: "too-short-secret" });
    assert.notEqual(short.code, 0);
    assert.match(failureLine(short.output), /SECRET_TOKEN must be at least 32 bytes/);
    assert.ok(!short.output.includes("too-short-secret"));
  });

  test("TRUST_PROXY=0.0.0.0/0: the one-line error, no stack trace", async () => {
    const run = await startFailing({ DB_URL: "sqlite::memory:", TRUST_PROXY: "0.0.0.0/0" });
    assert.notEqual(run.code, 0);
    assert.match(failureLine(run.output), /TRUST_PROXY has "0\.0\.0\.0\/0"/);
    assert.doesNotMatch(run.output, /TypeError|\n\s+at /);
  });

  test("NODE_ENV=production without credentials or DB_URL names every missing variable", async () => {
    const run = await startFailing({
      NODE_ENV: "production",
      AUTH_USERNAME: "",
      AUTH_PASSWORD: "",
    });
    assert.notEqual(run.code, 0);
    const line = failureLine(run.output);
    for (const name of ["AUTH_USERNAME", "AUTH_PASSWORD", "DB_URL"])
      assert.match(line, new RegExp(name));
  });

  test("PostgreSQL refusing connections: fails at once, naming the host, not the password", async () => {
    // A port nothing listens on: the connection is refused.
    const port = await freePort();
    const run = await startFailing({
      DB_URL: `postgres://app:hunter2secret@127.0.0.1:${port}/books`,
    });
    assert.notEqual(run.code, 0);
    assert.ok(
      failureLine(run.output).includes(
        `cannot reach PostgreSQL at postgres://app@127.0.0.1:${port}/books`,
      ),
      run.output,
    );
    assert.ok(!run.output.includes("hunter2secret"));
  });

  test("PostgreSQL that never answers: gives up within 10 s", async () => {
    // A listener that accepts and then says nothing, like a host behind a dropped route.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    const run = await startFailing({ DB_URL: `postgres://app:pw@127.0.0.1:${port}/books` }, 20_000);
    silent.close();
    assert.notEqual(run.code, 0);
    assert.match(
      failureLine(run.output),
      /cannot reach PostgreSQL at postgres:\/\/app@127\.0\.0\.1:\d+\/books/,
    );
    assert.ok(run.ms < 13_000, `took ${run.ms} ms`);
  });

  test("PostgreSQL's own reason is named: a database or a role that does not exist", {
    skip: postgresSkip,
  }, async () => {
    const base = new URL(process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL);
    const database = new URL(base);
    database.pathname = "/no_such_catalogue_db";
    database.password = "db-secret-never-shown";
    const role = new URL(base);
    role.username = "no_such_catalogue_role";
    for (const [url, reason] of [
      [database, /: database "no_such_catalogue_db" does not exist \(3D000\)$/],
      [role, /: role "no_such_catalogue_role" does not exist \(28000\)$/],
    ] as const) {
      const run = await startFailing({ DB_URL: url.href });
      assert.notEqual(run.code, 0);
      assert.match(failureLine(run.output), reason);
      assert.ok(!run.output.includes("db-secret-never-shown"));
    }
  });

  test("a PostgreSQL schema newer than this build cannot be prepared", {
    skip: postgresSkip,
  }, async () => {
    const schema = await freshPostgresSchema();
    const db = await pgConnect(schema.dbUrl);
    await db.sql`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)`;
    await db.sql`INSERT INTO schema_migrations (version) VALUES (999)`;
    await db.end();
    const run = await startFailing({ DB_URL: schema.dbUrl });
    await schema.drop();
    assert.notEqual(run.code, 0);
    assert.match(failureLine(run.output), /cannot prepare the PostgreSQL schema/);
  });
});
