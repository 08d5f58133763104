// CHANGES_KEEP_DAYS and CHANGES_KEEP: the log is trimmed off the request path, by the server
// itself, and what is no longer kept answers 410.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { keepChanges } from "../../src/changes/retention.js";
import { Messages } from "../../src/http/envelope.js";
import { type ChangeLog, ChangesGoneError } from "../../src/store/changes.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { login, request, startService } from "../support/service.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };
const CREDENTIALS = { username: "keeper", password: "keeper-password" };
const quiet = { info: () => {}, warn: () => {} };

test("trims until what is kept holds, then waits for the next tick, and stops when told", async () => {
  const store = openSqliteStore(":memory:");
  const log = store.changes as ChangeLog;
  for (let i = 0; i < 30; i++) await store.create({ ...DUNE, year: i });
  const trims: number[] = [];
  const counted: ChangeLog = {
    ...log,
    trim: async (kept) => {
      const removed = await log.trim(kept);
      trims.push(removed);
      return removed;
    },
  };
  const keeping = keepChanges(counted, { days: 30, entries: 4 }, quiet);
  for (let i = 0; i < 100 && trims.at(-1) !== 0; i++) await new Promise((r) => setTimeout(r, 10));
  keeping.stop();
  assert.deepEqual(trims, [26, 0]);
  await assert.rejects(log.list(0, 10), ChangesGoneError);
  assert.equal((await log.list((await log.latest()) - 4, 10)).length, 4);
  await store.close();
});

test("the server trims at start to CHANGES_KEEP: older changes answer 410", async () => {
  const dir = mkdtempSync(join(tmpdir(), "books-retention-"));
  const env = {
    HOST: "127.0.0.1",
    PORT: "0",
    DB_URL: `sqlite:${join(dir, "books.db")}`,
    AUTH_USERNAME: CREDENTIALS.username,
    AUTH_PASSWORD: CREDENTIALS.password,
    SECRET_TOKEN: "retention-secret-that-is-at-least-32-bytes",
  };
  try {
    let service = await startService(env);
    let token = await login(service, CREDENTIALS);
    for (let i = 0; i < 5; i++) await request(service, "POST", "/book", token, DUNE);
    assert.equal((await request(service, "GET", "/changes?since=0", token)).status, 200);
    assert.equal(await service.stop(), 0);

    service = await startService({ ...env, CHANGES_KEEP: "2" });
    token = await login(service, CREDENTIALS);
    let answer = await request(service, "GET", "/changes?since=0", token);
    for (let i = 0; i < 50 && answer.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      answer = await request(service, "GET", "/changes?since=0", token);
    }
    assert.deepEqual(answer.body, { status: 410, message: Messages.changesGone, data: null });
    const kept = await request<unknown[]>(service, "GET", "/changes?since=3", token);
    assert.equal(kept.body.data?.length, 2);
    assert.equal(await service.stop(), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
