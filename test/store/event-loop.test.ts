// The event loop never waits for SQLite: while another connection holds the write lock, or
// while an exact count reads every match of a broad search, /health and reads still answer.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { seedBooks } from "../../bench/catalogue.js";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import type { AccountStore } from "../../src/store/accounts.js";
import { SEARCH_BOUNDS } from "../../src/store/sqlite/listing.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { type BookStore, StoreUnavailableError } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call, tokenFor } from "../support/helpers.js";
import { LOOP_DELAY_LIMIT_MS, type LoopRecord, startLoopRecord } from "../support/loop-delay.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };
const CATALOGUE_SIZE = 300_000;
const ADA = { role: "reader", passwordHash: "scrypt$x", tokensValidFrom: 0 } as const;

/**
 * Runs `work` while /health is asked every 20 ms: each answer must be 200, and the loop never
 * held for the limit: wall time less the waits for a core (a request asleep in a lock wait
 * uses no CPU, so the CPU bound of the other loop tests would miss it).
 */
async function probingHealth<T>(t: test.TestContext, app: App, work: () => Promise<T>) {
  const records: LoopRecord[] = [];
  const stop = startLoopRecord(t.name, records);
  // The histogram's first tick only marks its start: what held the loop before it is missed.
  await sleep(20);
  let working = true;
  const probes: number[] = [];
  const probing = (async () => {
    while (working) {
      probes.push((await call(app, "GET", "/health")).status);
      await sleep(20);
    }
  })();
  try {
    return await work();
  } finally {
    working = false;
    await probing;
    stop();
    const [record] = records as [LoopRecord];
    const ms = (ns: number) => `${(ns / 1e6).toFixed(1)} ms`;
    t.diagnostic(
      `${probes.length} probes; event-loop delay max ${ms(record.delay.max)}, p99 ${ms(record.delay.percentile(99))}; longest gap ${record.maxGapMs.toFixed(1)} ms, ${record.maxStalledMs.toFixed(1)} ms of it not waiting for a core`,
    );
    assert.ok(probes.length > 0, "/health was asked while the work went on");
    assert.ok(
      probes.every((status) => status === 200),
      `/health answered ${[...new Set(probes)]}`,
    );
    assert.ok(
      record.maxStalledMs < LOOP_DELAY_LIMIT_MS,
      `the event loop was held ${record.maxStalledMs.toFixed(1)} ms (limit ${LOOP_DELAY_LIMIT_MS} ms)`,
    );
  }
}

describe("the event loop never waits for SQLite", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "books-loop-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("while another connection holds the write lock, /health and reads answer", async (t) => {
    const path = join(dir, "locked.db");
    const store = openSqliteStore(path);
    const app = await buildTestApp({ store });
    const token = await tokenFor(app);
    const first = await call<{ id: number }>(app, "POST", "/book", { token, body: DUNE });
    // An operator's shell, another instance: anything that holds the lock for a while.
    const other = new DatabaseSync(path);
    other.exec("BEGIN IMMEDIATE");
    const started = performance.now();
    const created = await probingHealth(t, app, async () => {
      const waiting = call(app, "POST", "/book", { token, body: DUNE });
      await sleep(1_500);
      const read = await call(app, "GET", `/book/${first.body.data?.id}`, { token });
      assert.equal(read.status, 200, "a read answers while the write waits");
      other.exec("ROLLBACK");
      return waiting;
    });
    other.close();
    assert.equal(created.status, 201, "the write went on once the lock was let go");
    assert.ok(performance.now() - started >= 1_500, "the write waited for the lock");
    await app.close();
    await store.close();
  });

  /**
   * A store whose writes may wait 1 s (DB_TIMEOUT_SECONDS=1, the least it may be), one book
   * and one account (`ada`, its id) in it, and its writer stalled: here on a lock another
   * connection holds (it would wait 5 s for it), as on a disk that hangs. `release` lets the
   * lock go.
   */
  async function stalledWriter(name: string) {
    const path = join(dir, name);
    // The book and the account are written by a store with the usual timeout first: on a
    // busy machine, starting a writer can take longer than the 1 s the test is about.
    const seeding = openSqliteStore(path);
    await seeding.create(DUNE);
    const ada = await (seeding.accounts as AccountStore).create({ ...ADA, name: "ada" });
    await seeding.close();
    const store = openSqliteStore(path, SEARCH_BOUNDS, 1_000);
    const app = await buildTestApp({ store });
    const token = await tokenFor(app);
    const accounts = store.accounts as AccountStore;
    const other = new DatabaseSync(path);
    other.exec("BEGIN IMMEDIATE");
    const titles = async () =>
      (await call<{ title: string }[]>(app, "GET", "/books?limit=100", { token })).body.data?.map(
        (book) => book.title,
      ) ?? [];
    const release = () => {
      other.exec("ROLLBACK");
      other.close();
    };
    const close = async () => {
      await app.close();
      await store.close();
    };
    return { app, token, titles, release, close, accounts, ada: ada?.id as number };
  }

  test("a write not answered within the store's timeout answers 503, and is never applied", async () => {
    const { app, token, titles, release, close } = await stalledWriter("stalled.db");
    const started = performance.now();
    const stalled = await call(app, "POST", "/book", { token, body: { ...DUNE, title: "Late" } });
    const waited = performance.now() - started;
    release();
    assert.equal(stalled.status, 503);
    assert.equal(stalled.body.message, Messages.serviceUnavailable);
    assert.ok(waited < 4_000, `answered after ${Math.round(waited)} ms, not at the timeout`);
    // Once the writer goes on, the write answered 503 is skipped, not committed behind it.
    const next = await call(app, "POST", "/book", { token, body: { ...DUNE, title: "Next" } });
    assert.equal(next.status, 201);
    assert.deepEqual((await titles()).sort(), ["Dune", "Next"]);
    await close();
  });

  test("an account write waiting for the lock holds no event loop; its 503 wrote nothing", async (t) => {
    const { app, release, close, accounts, ada } = await stalledWriter("accounts.db");
    const started = performance.now();
    const answers = await probingHealth(t, app, () =>
      Promise.allSettled([
        accounts.create({ ...ADA, name: "late" }),
        accounts.update(ada, { role: "admin", enabled: false }),
        accounts.remove(ada),
      ]),
    );
    const waited = performance.now() - started;
    release();
    for (const answer of answers) {
      assert.equal(answer.status, "rejected");
      assert.ok(answer.reason instanceof StoreUnavailableError, String(answer.reason));
    }
    assert.ok(waited >= 1_000, `answered after ${Math.round(waited)} ms, before the timeout`);
    assert.ok(waited < 4_000, `answered after ${Math.round(waited)} ms, not at the timeout`);
    // Once the writer goes on, the writes answered 503 are skipped, not committed behind it.
    assert.equal((await accounts.create({ ...ADA, name: "next" }))?.name, "next");
    assert.deepEqual(
      (await accounts.list()).map(({ name, role, enabled }) => [name, role, enabled]),
      [
        ["ada", "reader", true],
        ["next", "reader", true],
      ],
    );
    await close();
  });

  test("a write answered 503 near its deadline wrote nothing: writes meet a lock let go then", async () => {
    const { app, token, titles, release, close } = await stalledWriter("straddled.db");
    // Writes 2 ms apart whose timeouts end around the moment the lock is let go: the writer
    // may begin the last of them then, but none it cannot answer in time.
    const answers = [];
    for (let i = 0; i < 30; i++) {
      answers.push(call(app, "POST", "/book", { token, body: { ...DUNE, title: `Race ${i}` } }));
      await sleep(2);
    }
    await sleep(1_000 - 60 + 10);
    release();
    const statuses = (await Promise.all(answers)).map((answer) => answer.status);
    const stored = new Set(await titles());
    assert.ok(statuses.includes(503), "some waited past their timeout");
    for (const [i, status] of statuses.entries()) {
      assert.ok(status === 201 || status === 503, `Race ${i}: ${status}`);
      assert.equal(stored.has(`Race ${i}`), status === 201, `Race ${i} answered ${status}`);
    }
    await close();
  });

  describe(`an exact count at ${CATALOGUE_SIZE.toLocaleString("en")} books`, () => {
    let store: BookStore;
    let app: App;
    let token: string;
    before(async () => {
      const path = join(dir, "large.db");
      await openSqliteStore(path).close();
      // Every title starts with "Catalogue"; a hundred authors; every seventh book a dog.
      function* books() {
        for (let i = 1; i <= CATALOGUE_SIZE; i++) {
          const animal = i % 7 === 0 ? "dogs" : "cats";
          yield {
            title: `Catalogue of the big ${animal} ${i}`,
            author: `Author ${i % 100}`,
            year: 1900 + (i % 120),
          };
        }
      }
      await seedBooks({ kind: "sqlite", path }, books());
      // The search's time bound has a test of its own (below): here a busy machine's slow
      // count must still be exact, so the bound is far off.
      store = openSqliteStore(path, { ...SEARCH_BOUNDS, limitMs: 60_000 });
      app = await buildTestApp({ store });
      token = await tokenFor(app);
    });
    after(async () => {
      await app.close();
      await store.close();
    });

    for (const [query, expected] of [
      ["q=ca&author=Author%205", CATALOGUE_SIZE / 100],
      ["q=of+the+big&year=1999", CATALOGUE_SIZE / 120],
      ["q=cat", CATALOGUE_SIZE],
    ] as const) {
      test(`?${query}: the total is exact, and /health answers while it is counted`, async (t) => {
        const answer = await probingHealth(t, app, () =>
          call(app, "GET", `/books?${query}&limit=1`, {
            token,
            headers: { prefer: "count=exact" },
          }),
        );
        assert.equal(answer.status, 200);
        assert.equal(answer.body.message, Messages.booksRetrieved);
        assert.equal(answer.headers["x-total-count"], String(expected));
      });
    }

    test("a count that takes longer than its bound is refused as too broad", async () => {
      const bounded = openSqliteStore(join(dir, "large.db"), { ...SEARCH_BOUNDS, limitMs: 1 });
      const boundedApp = await buildTestApp({ store: bounded });
      const answer = await call(boundedApp, "GET", "/books?q=ca&limit=1", {
        token: await tokenFor(boundedApp),
        headers: { prefer: "count=exact" },
      });
      assert.deepEqual(answer.body, { status: 400, message: Messages.searchTooBroad, data: null });
      assert.equal(answer.headers["x-total-count"], undefined);
      await boundedApp.close();
      await bounded.close();
    });
  });
});
