// Scheduled backups (BACKUP_DIR) in the running service, on both stores and under writes:
// the count kept, each file complete, the metrics set; a folder that fails is logged and
// counted and harms nothing else; restarts neither skip nor crowd them.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Book } from "../../src/rules/book.js";
import { describe } from "../support/describe.js";
import { freePort, login, request, type Service, startService } from "../support/service.js";
import { type Catalogue, cli, newCatalogue, seed, skipOf, until } from "./catalogues.js";

const CREDENTIALS = { username: "schedule", password: "schedule-test-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: "schedule-test-secret-of-at-least-32-bytes",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  LOG_LEVEL: "info",
};
const BACKUP = /^books-\d{8}T\d{6}Z\.backup$/;

const backupsIn = (dir: string) =>
  readdirSync(dir)
    .filter((name) => BACKUP.test(name))
    .sort();
const logLines = (service: Service, message: string) =>
  service
    .output()
    .split("\n")
    .filter((line) => line.includes(`"msg":"${message}"`))
    .map((line) => JSON.parse(line));

async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return Number(line?.split(" ").at(-1));
}

/** Writers that create books until stopped; every answer must be a 201. */
function writeContinuously(service: Service, token: string) {
  const failures: number[] = [];
  let written = 0;
  let running = true;
  const writer = async () => {
    while (running) {
      const answer = await request<Book>(service, "POST", "/book", token, {
        title: `Scheduled ${written}`,
        author: "Writer",
        year: 2001,
      });
      if (answer.status === 201) written += 1;
      else failures.push(answer.status);
    }
  };
  const done = Promise.all(Array.from({ length: 8 }, writer));
  return {
    failures,
    written: () => written,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

for (const kind of ["sqlite", "postgres"] as const) {
  describe(`scheduled backups on ${kind}`, { skip: skipOf(kind) }, () => {
    let dir: string;
    let catalogue: Catalogue;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "books-schedule-"));
      catalogue = await newCatalogue(kind);
      await seed(catalogue, 5000);
    });
    after(async () => {
      await catalogue.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    test("every second, the newest three kept, each complete, the metrics set, writes unharmed", async () => {
      const backups = join(dir, "every-second");
      const metricsPort = await freePort();
      const env = { BACKUP_DIR: backups, BACKUP_INTERVAL_SECONDS: "1", BACKUP_KEEP: "3" };
      const started = Date.now() / 1000;
      const service = await startService(
        { ...ENV, ...env, DB_URL: catalogue.dbUrl, METRICS_PORT: String(metricsPort) },
        { direct: true },
      );
      try {
        const writers = writeContinuously(service, await login(service, CREDENTIALS));
        await until(() => logLines(service, "backup written").length >= 5);
        await writers.stop();
        assert.deepEqual(writers.failures, []);
        assert.ok(writers.written() > 0);
        assert.ok(
          (await metric(metricsPort, "book_catalogue_backup_last_success_timestamp_seconds")) >=
            Math.floor(started),
        );
        assert.ok(
          (await metric(metricsPort, 'book_catalogue_backups_total{outcome="success"}')) >= 5,
        );
        assert.equal(
          await metric(metricsPort, 'book_catalogue_backups_total{outcome="failure"}'),
          0,
        );
      } finally {
        assert.equal(await service.stop(), 0);
      }
      const kept = backupsIn(backups);
      assert.equal(kept.length, 3);
      const written = logLines(service, "backup written").map((line) =>
        line.file.split("/").at(-1),
      );
      assert.deepEqual(kept, written.slice(-3), "the newest three");
      for (const name of kept) {
        const check = await cli(["backup", "--check", join(backups, name)]);
        assert.equal(check.code, 0, check.stderr);
      }
    });

    test("a folder that cannot be written is logged and counted; the service serves on", async () => {
      const blocker = join(dir, "a-file");
      writeFileSync(blocker, "not a folder");
      const metricsPort = await freePort();
      const service = await startService(
        {
          ...ENV,
          DB_URL: catalogue.dbUrl,
          BACKUP_DIR: join(blocker, "backups"),
          BACKUP_INTERVAL_SECONDS: "1",
          METRICS_PORT: String(metricsPort),
        },
        { direct: true },
      );
      try {
        await until(() => logLines(service, "backup failed").length >= 2);
        const [failure] = logLines(service, "backup failed");
        assert.equal(failure.level, 50);
        assert.match(failure.reason, /ENOTDIR/);
        assert.ok(
          (await metric(metricsPort, 'book_catalogue_backups_total{outcome="failure"}')) >= 2,
        );
        assert.equal(
          await metric(metricsPort, "book_catalogue_backup_last_success_timestamp_seconds"),
          0,
        );
        const token = await login(service, CREDENTIALS);
        const created = await request(service, "POST", "/book", token, {
          title: "Still",
          author: "Here",
          year: 2026,
        });
        assert.equal(created.status, 201);
        assert.equal((await fetch(`${service.url}/ready`)).status, 200);
      } finally {
        assert.equal(await service.stop(), 0);
      }
    });
  });
}

test("a restart takes the next backup an interval after the newest, not at once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "books-schedule-restart-"));
  const env = {
    ...ENV,
    DB_URL: `sqlite:${join(dir, "books.db")}`,
    BACKUP_DIR: join(dir, "backups"),
    BACKUP_INTERVAL_SECONDS: "3600",
  };
  try {
    const first = await startService(env, { direct: true });
    await until(() => logLines(first, "backup written").length === 1);
    assert.equal(await first.stop(), 0);
    // What a backup killed midway leaves; the next process removes it.
    const leftBehind = join(dir, "backups", ".books-20200101T000000Z.backup.99999.partial");
    writeFileSync(leftBehind, " ");
    const second = await startService(env, { direct: true });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(await second.stop(), 0);
    assert.equal(logLines(second, "backup written").length, 0);
    assert.equal(backupsIn(join(dir, "backups")).length, 1);
    assert.ok(!existsSync(leftBehind), "the temporary file of a killed backup is removed");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The time a scheduled backup's name gives, in Unix seconds. */
const timeOfName = (name: string) =>
  Date.parse(
    name.replace(/^books-(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z\.backup$/, "$1-$2-$3T$4:$5:$6Z"),
  ) / 1000;

/** /metrics's first answer, asked for until it listens. */
async function firstMetric(port: number, name: string): Promise<number> {
  for (let tries = 0; ; tries++) {
    try {
      return await metric(port, name);
    } catch (error) {
      if (tries === 200) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

for (const workers of ["1", "2"]) {
  test(`WORKERS=${workers}: after a restart, /metrics has the newest backup's time from its first answer`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-schedule-found-"));
    const backups = join(dir, "backups");
    const env = {
      ...ENV,
      WORKERS: workers,
      DB_URL: `sqlite:${join(dir, "books.db")}`,
      BACKUP_DIR: backups,
      BACKUP_INTERVAL_SECONDS: "3600",
    };
    try {
      const first = await startService(env, { direct: true });
      await until(() => logLines(first, "backup written").length === 1);
      assert.equal(await first.stop(), 0);
      const [taken] = backupsIn(backups);
      assert.ok(taken);
      // Neither a temporary file nor another name counts, however new its time.
      writeFileSync(join(backups, ".books-29990101T000000Z.backup.99999.partial"), " ");
      writeFileSync(join(backups, "books-29990101T000000Z.backup.copy"), " ");
      const metricsPort = await freePort();
      const second = await startService(
        { ...env, METRICS_PORT: String(metricsPort) },
        { direct: true },
      );
      try {
        assert.equal(
          await firstMetric(metricsPort, "book_catalogue_backup_last_success_timestamp_seconds"),
          timeOfName(taken),
        );
      } finally {
        assert.equal(await second.stop(), 0);
      }
      assert.equal(logLines(second, "backup written").length, 0, "none due for an hour");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("with WORKERS=2 the primary takes the backups, and its metrics join the workers'", async () => {
  const dir = mkdtempSync(join(tmpdir(), "books-schedule-workers-"));
  const metricsPort = await freePort();
  try {
    const service = await startService(
      {
        ...ENV,
        WORKERS: "2",
        DB_URL: `sqlite:${join(dir, "books.db")}`,
        BACKUP_DIR: join(dir, "backups"),
        BACKUP_INTERVAL_SECONDS: "1",
        METRICS_PORT: String(metricsPort),
      },
      { direct: true },
    );
    try {
      await until(() => logLines(service, "backup written").length >= 2);
      assert.ok(logLines(service, "backup written").every((line) => line.role === "primary"));
      assert.ok(
        (await metric(metricsPort, 'book_catalogue_backups_total{outcome="success"}')) >= 2,
      );
      assert.equal((await fetch(`${service.url}/health`)).status, 200);
      assert.ok(
        (await metric(metricsPort, "book_catalogue_http_requests_total")) >= 1,
        "the workers' too",
      );
    } finally {
      assert.equal(await service.stop(), 0);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
