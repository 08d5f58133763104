// An account's tokens end at once in every process that serves: two instances on one
// PostgreSQL, and the workers of WORKERS=2 on a SQLite file (the built service).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { openStore } from "../../src/store/open.js";
import type { BookStore } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  call,
  freshPostgresSchema,
  storesUnderTest,
  TEST_PASSWORD,
  TEST_USERNAME,
} from "../support/helpers.js";
import { type Service, startService } from "../support/service.js";

const PASSWORD = "twelve chars or more";
const postgres = (await storesUnderTest()).find((kind) => kind.name === "postgres");

describe("two instances on one PostgreSQL", { skip: postgres?.skip ?? "no PostgreSQL" }, () => {
  let drop: () => Promise<void>;
  const stores: BookStore[] = [];
  const apps: App[] = [];
  before(async () => {
    const schema = await freshPostgresSchema();
    drop = schema.drop;
    for (let i = 0; i < 2; i++) {
      stores.push(await openStore({ db: { kind: "postgres", url: schema.dbUrl }, pgPoolSize: 2 }));
      apps.push(await buildTestApp({ store: stores[i] as BookStore }));
    }
  });
  after(async () => {
    for (const app of apps) await app.close();
    for (const store of stores) await store.close();
    await drop?.();
  });

  test("a disable or a new password at one ends the tokens at the other at once", async () => {
    const [a, b] = apps as [App, App];
    const admin = await tokenAt(a, TEST_USERNAME, TEST_PASSWORD);
    const added = await call<{ id: number }>(a, "POST", "/accounts", {
      token: admin,
      body: { name: "ines", role: "librarian", password: PASSWORD },
    });
    const id = added.body.data?.id as number;
    const fromB = await tokenAt(b, "ines", PASSWORD);
    assert.equal((await call(a, "GET", "/books", { token: fromB })).status, 200);

    await patch(b, admin, id, { enabled: false });
    for (const app of [a, b]) await assertEnded(app, fromB);

    await patch(a, admin, id, { enabled: true });
    const again = await tokenAt(a, "ines", PASSWORD);
    assert.equal((await call(b, "GET", "/books", { token: again })).status, 200);
    await patch(b, admin, id, { password: "a new long password" });
    for (const app of [a, b]) await assertEnded(app, again);
    const fresh = await tokenAt(a, "ines", "a new long password");
    for (const app of [a, b]) {
      assert.equal((await call(app, "GET", "/books", { token: fresh })).status, 200);
    }
  });
});

async function tokenAt(app: App, username: string, password: string): Promise<string> {
  const answer = await call<{ token: string }>(app, "POST", "/token", {
    body: { username, password },
  });
  assert.equal(answer.status, 200, answer.raw);
  return answer.body.data?.token as string;
}

async function patch(app: App, token: string, id: number, body: object) {
  const answer = await call(app, "PATCH", `/accounts/${id}`, { token, body });
  assert.equal(answer.status, 200, answer.raw);
}

async function assertEnded(app: App, token: string) {
  const answer = await call(app, "GET", "/books", { token });
  assert.deepEqual(answer.body, { status: 401, message: Messages.invalidToken, data: null });
}

interface Answered {
  status: number;
  body: { data: unknown };
  /** The worker that answered, from its request id ("w2-…"). */
  worker: string;
}

/** One request on a connection of its own: new connections go to the workers in turn. */
function once(service: Service, method: string, path: string, token?: string, body?: unknown) {
  return new Promise<Answered>((resolve, reject) => {
    const headers = token ? { authorization: token } : {};
    const sent = httpRequest(`${service.url}${path}`, { method, agent: false, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => {
        const worker = /^(w\d+)-/.exec(String(res.headers["x-request-id"]))?.[1] ?? "";
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), worker });
      });
    });
    sent.on("error", reject);
    sent.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The statuses every worker answers GET /books with `token`, each asked several times. */
async function statusesByWorker(service: Service, token: string) {
  const seen: Record<string, Set<number>> = {};
  for (let i = 0; i < 6; i++) {
    const { status, worker } = await once(service, "GET", "/books", token);
    seen[worker] ??= new Set();
    seen[worker].add(status);
  }
  return Object.fromEntries(Object.entries(seen).map(([w, s]) => [w, [...s]]));
}

describe("WORKERS=2 on a SQLite file", () => {
  let dir: string;
  let service: Service;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "books-accounts-workers-"));
    service = await startService(
      {
        HOST: "127.0.0.1",
        PORT: "0",
        WORKERS: "2",
        DB_URL: `sqlite:${join(dir, "books.db")}`,
        SECRET_TOKEN: "accounts-workers-secret-of-32-bytes-or-more",
        AUTH_USERNAME: TEST_USERNAME,
        AUTH_PASSWORD: TEST_PASSWORD,
        LOG_LEVEL: "info",
      },
      { direct: true },
    );
  });
  after(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const tokenOf = async (username: string, password: string) => {
    const answer = await once(service, "POST", "/token", undefined, { username, password });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return (answer.body.data as { token: string }).token;
  };
  // The workers that answered account writes: each writes through the primary's writer.
  const writers = new Set<string>();
  const change = async (admin: string, id: number, body: object) => {
    const answer = await once(service, "PATCH", `/accounts/${id}`, admin, body);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    writers.add(answer.worker);
  };

  test("a disable or a new password through either worker ends the tokens at both at once", async () => {
    const admin = await tokenOf(TEST_USERNAME, TEST_PASSWORD);
    const added = await once(service, "POST", "/accounts", admin, {
      name: "ines",
      role: "reader",
      password: PASSWORD,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    writers.add(added.worker);
    const id = (added.body.data as { id: number }).id;
    const first = await tokenOf("ines", PASSWORD);
    assert.deepEqual(await statusesByWorker(service, first), { w1: [200], w2: [200] });

    await change(admin, id, { enabled: false });
    assert.deepEqual(await statusesByWorker(service, first), { w1: [401], w2: [401] });

    await change(admin, id, { enabled: true });
    const second = await tokenOf("ines", PASSWORD);
    assert.deepEqual(await statusesByWorker(service, second), { w1: [200], w2: [200] });
    await change(admin, id, { password: "a new long password" });
    assert.deepEqual(await statusesByWorker(service, second), { w1: [401], w2: [401] });
    const third = await tokenOf("ines", "a new long password");
    assert.deepEqual(await statusesByWorker(service, third), { w1: [200], w2: [200] });
    assert.deepEqual([...writers].sort(), ["w1", "w2"], "account writes from either worker");
  });
});
