// GET /changes as Server-Sent Events, over a real socket: from `since`, then live; resumed
// from Last-Event-ID with nothing missed; bounded per client; ended with the token and at
// shutdown.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import { tokensEndNow } from "../../src/auth/signed-in.js";
import { changeFeed, FEED_PAGE } from "../../src/changes/feed.js";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { createMetrics } from "../../src/http/metrics.js";
import type { AccountStore } from "../../src/store/accounts.js";
import type { ChangeLog } from "../../src/store/changes.js";
import { openStore } from "../../src/store/open.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  freshPostgresSchema,
  listenLocally,
  type OpenedStore,
  postgresSkipReason,
  storesUnderTest,
  TEST_SECRET,
  testConfig,
  tokenFor,
} from "../support/helpers.js";
import { openStream } from "../support/sse.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };
/** What a stream may leave unsent here: a backlog of a few hundred books passes it. */
const BUFFERED = 64 * 1024;
/**
 * How often streams of accounts are checked by the instance of one test, standing for another
 * instance's change; the others' checks wait a minute, so that only a change made through them
 * ends a stream.
 */
const ACCOUNT_CHECK_MS = 100;
const PASSWORD = "twelve chars or more";

/**
 * A stream opened once the client has a place for it: the places of streams it closed are
 * given back as the server sees them close, a moment later.
 */
async function openWhenFree(url: string, token: string) {
  for (let i = 0; ; i++) {
    const stream = openStream(url, token);
    const { status } = await stream.opened;
    if (status === 200) return stream;
    stream.close();
    assert.equal(status, 429);
    assert.ok(i < 100, "no place was given back within 2 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A token of the built-in pair that expires in `seconds`, signed as the service signs. */
function shortToken(seconds: number): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const input = `${part({ alg: "HS256", typ: "JWT" })}.${part({ exp: Math.floor(Date.now() / 1000) + seconds })}`;
  return `${input}.${createHmac("sha256", TEST_SECRET).update(input).digest("base64url")}`;
}

for (const kind of await storesUnderTest({ sqliteFile: true })) {
  describe(`the change stream on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let app: App;
    let base: string;
    let token: string;
    const post = (year: number) =>
      fetch(`${base}/book`, {
        method: "POST",
        headers: { authorization: token, "content-type": "application/json" },
        body: JSON.stringify({ ...DUNE, year }),
      });

    before(async () => {
      opened = await kind.open();
      const config = testConfig({ CHANGES_STREAMS_PER_CLIENT: "3" });
      const changeStreams = {
        ...config.changeStreams,
        maxBufferedBytes: BUFFERED,
        accountCheckMs: 60_000,
      };
      app = await buildTestApp({ store: opened.store, config: { ...config, changeStreams } });
      base = await listenLocally(app);
      token = await tokenFor(app);
    });
    after(async () => {
      await app?.close();
      await opened?.dispose();
    });

    test("the entries after `since`, then each write as it is answered, once and in order", async () => {
      const since = await (opened.store.changes as ChangeLog).latest();
      for (let year = 0; year < 3; year++) await post(year);
      const stream = openStream(`${base}/changes?since=${since}`, token);
      const response = await stream.opened;
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("content-type"), "text/event-stream; charset=utf-8");
      assert.equal(response.headers.get("cache-control"), "no-store");
      await stream.until(() => stream.events.length === 3);
      for (let year = 3; year < 6; year++) await post(year);
      await stream.until(() => stream.events.length === 6);
      assert.deepEqual(
        stream.events.map((e) => [e.event, e.data.book?.year]),
        [0, 1, 2, 3, 4, 5].map((year) => ["create", year]),
      );
      const seqs = stream.events.map((e) => Number(e.id));
      assert.deepEqual(
        seqs,
        stream.events.map((e) => e.data.seq),
      );
      assert.ok(seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] as number)));
      stream.close();
    });

    test("resumed from Last-Event-ID, a follower misses nothing written while it was away", async () => {
      const since = await (opened.store.changes as ChangeLog).latest();
      const first = openStream(`${base}/changes?since=${since}`, token);
      await first.opened;
      await post(100);
      await first.until(() => first.events.length === 1);
      first.close();
      for (let year = 101; year < 104; year++) await post(year);
      const last = first.events.at(-1)?.id as string;
      const second = openStream(`${base}/changes?since=0`, token, { "last-event-id": last });
      await second.until(() => second.events.length === 3);
      assert.deepEqual(
        second.events.map((e) => e.data.book?.year),
        [101, 102, 103],
      );
      second.close();
    });

    test("a since no longer kept is 410 before any stream; a bad Last-Event-ID is 400", async () => {
      await post(1);
      await (opened.store.changes as ChangeLog).trim({ days: 30, entries: 0 });
      const gone = await openStream(`${base}/changes?since=0`, token).opened;
      assert.equal(gone.status, 410);
      assert.deepEqual(await gone.json(), {
        status: 410,
        message: Messages.changesGone,
        data: null,
      });
      for (const last of ["x1", "9007199254740992"]) {
        const bad = await openStream(`${base}/changes`, token, { "last-event-id": last }).opened;
        assert.equal(bad.status, 400, last);
        assert.match(bad.headers.get("problem-reason") ?? "", /^Last-Event-ID: /);
      }
    });

    test("streams one client may hold are bounded: past them 429, and a place freed is taken again", async () => {
      const latest = await (opened.store.changes as ChangeLog).latest();
      const streams = [1, 2, 3].map(() => openStream(`${base}/changes?since=${latest}`, token));
      for (const stream of streams) assert.equal((await stream.opened).status, 200);
      const fourth = await openStream(`${base}/changes?since=${latest}`, token).opened;
      assert.equal(fourth.status, 429);
      assert.equal(fourth.headers.get("retry-after"), "5");
      streams[0]?.close();
      await streams[0]?.reading;
      const again = await openWhenFree(`${base}/changes?since=${latest}`, token);
      again.close();
      for (const stream of streams) stream.close();
    });

    test("a follower far behind catches up at its reader's pace, however far behind", async () => {
      const since = await (opened.store.changes as ChangeLog).latest();
      // Eight times what a stream may leave unsent, written before the stream opens.
      const title = "T".repeat(1000);
      const count = Math.ceil((8 * BUFFERED) / title.length);
      await Promise.all(
        Array.from({ length: count }, (_, year) =>
          opened.store.create({ title, author: "A", year }),
        ),
      );
      const stream = await openWhenFree(`${base}/changes?since=${since}`, token);
      await stream.until(() => stream.events.length === count || stream.ended(), 20_000);
      const years = stream.events.map((e) => e.data.book?.year as number);
      assert.deepEqual(
        years.toSorted((a, b) => a - b),
        Array.from({ length: count }, (_, year) => year),
      );
      const seqs = stream.events.map((e) => Number(e.id));
      assert.ok(seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] as number)));
      assert.equal(stream.ended(), false);
      stream.close();
    });

    /** A reader account named `name`, and a token of it. */
    const reader = async (name: string) => {
      const headers = { authorization: token, "content-type": "application/json" };
      const body = JSON.stringify({ name, role: "reader", password: PASSWORD });
      const added = await fetch(`${base}/accounts`, { method: "POST", headers, body });
      assert.equal(added.status, 201);
      const { id } = ((await added.json()) as { data: { id: number } }).data;
      const login = await fetch(`${base}/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: name, password: PASSWORD }),
      });
      return { id, token: ((await login.json()) as { data: { token: string } }).data.token };
    };

    test("an account's stream ends as it is disabled, removed or given a new password here", async () => {
      const changes: [string, string, object | undefined][] = [
        ["disabled", "PATCH", { enabled: false }],
        ["removed", "DELETE", undefined],
        ["repassworded", "PATCH", { password: `${PASSWORD} again` }],
      ];
      // A new role leaves the token, and its stream, as they were.
      const kept = await reader("promoted");
      const latest = await (opened.store.changes as ChangeLog).latest();
      const open = await openWhenFree(`${base}/changes?since=${latest}`, kept.token);
      const promoted = await fetch(`${base}/accounts/${kept.id}`, {
        method: "PATCH",
        headers: { authorization: token, "content-type": "application/json" },
        body: JSON.stringify({ role: "librarian" }),
      });
      assert.equal(promoted.status, 200);
      await post(7);
      await open.until(() => open.events.length === 1);
      assert.equal(open.ended(), false);
      open.close();
      for (const [name, method, change] of changes) {
        const account = await reader(name);
        const since = await (opened.store.changes as ChangeLog).latest();
        const stream = await openWhenFree(`${base}/changes?since=${since}`, account.token);
        const changed = await fetch(`${base}/accounts/${account.id}`, {
          method,
          headers: { authorization: token, "content-type": "application/json" },
          ...(change === undefined ? {} : { body: JSON.stringify(change) }),
        });
        assert.equal(changed.status, 200);
        // Ended before the change was answered: a book written after it never reaches it.
        await post(8);
        await stream.until(() => stream.ended(), 2_000);
        assert.deepEqual(stream.events, [], name);
      }
    });

    test("an account's stream ends at its next check when another instance disables it", async (t) => {
      const account = await reader("elsewhere");
      const config = testConfig();
      const changeStreams = { ...config.changeStreams, accountCheckMs: ACCOUNT_CHECK_MS };
      const checking = await buildTestApp({
        store: opened.store,
        config: { ...config, changeStreams },
      });
      t.after(() => checking.close());
      const since = await (opened.store.changes as ChangeLog).latest();
      const url = `${await listenLocally(checking)}/changes?since=${since}`;
      const stream = await openWhenFree(url, account.token);
      await post(9);
      await stream.until(() => stream.events.length === 1);
      const accounts = opened.store.accounts as AccountStore;
      await accounts.update(account.id, { enabled: false, tokensValidFrom: tokensEndNow() });
      await stream.until(() => stream.ended(), 20 * ACCOUNT_CHECK_MS);
    });

    test("HEAD asking for a stream is answered at once, as the page, and holds no stream", async () => {
      // More than the client's places for streams (3 here).
      for (let i = 0; i < 4; i++) {
        const head = await fetch(`${base}/changes?since=now`, {
          method: "HEAD",
          headers: { authorization: token, accept: "text/event-stream" },
          signal: AbortSignal.timeout(2_000),
        });
        assert.equal(head.status, 200);
        assert.match(head.headers.get("content-type") ?? "", /^application\/json/);
      }
      const stream = await openWhenFree(`${base}/changes?since=now`, token);
      stream.close();
    });

    test("a stream ends when its token expires", async () => {
      const since = await (opened.store.changes as ChangeLog).latest();
      const stream = await openWhenFree(`${base}/changes?since=${since}`, shortToken(2));
      await post(7);
      await stream.until(() => stream.events.length === 1);
      await stream.until(() => stream.ended(), 5_000);
      stream.close();
    });
  });
}

test("shutdown ends every stream", async () => {
  const app = await buildTestApp();
  const base = await listenLocally(app);
  const token = await tokenFor(app);
  const stream = openStream(`${base}/changes`, token);
  assert.equal((await stream.opened).status, 200);
  const closing = app.close();
  await stream.until(() => stream.ended(), 5_000);
  await closing;
});

test("a live reader that does not read is dropped, its memory freed; the metrics count it", async () => {
  const metrics = createMetrics();
  const config = testConfig();
  const store = openSqliteStore(":memory:");
  const app = await buildTestApp({
    store,
    metrics,
    config: { ...config, changeStreams: { ...config.changeStreams, maxBufferedBytes: 64 * 1024 } },
  });
  const base = new URL(await listenLocally(app));
  const token = await tokenFor(app);
  // Asks for the stream and never reads: what the service sends as the books are written
  // fills the socket's buffers.
  const socket = connect(Number(base.port), base.hostname);
  socket.pause();
  socket.write(
    `GET /changes?since=0 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: ${token}\r\n\r\n`,
  );
  const gauge = async () =>
    (await metrics.registry.getSingleMetric("book_catalogue_change_streams")?.get())?.values[0]
      ?.value;
  const dropped = async () =>
    (
      await metrics.registry.getSingleMetric("book_catalogue_change_streams_refused_total")?.get()
    )?.values.find((v) => v.labels.reason === "fell behind")?.value;
  for (let i = 0; i < 200 && (await gauge()) !== 1; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(await gauge(), 1);
  const title = "T".repeat(500);
  await Promise.all(
    Array.from({ length: 4000 }, (_, i) => store.create({ title, author: "A", year: i })),
  );
  for (let i = 0; i < 200 && (await dropped()) !== 1; i++)
    await new Promise((r) => setTimeout(r, 25));
  assert.equal(await dropped(), 1);
  assert.equal(await gauge(), 0);
  socket.destroy();
  await app.close();
  await store.close();
});

describe("changes told across instances by PostgreSQL", {
  skip: await postgresSkipReason(),
}, () => {
  test("with CHANGES_LISTEN_URL another instance's write streams at once; without, at the next poll", async () => {
    const schema = await freshPostgresSchema();
    const db = { kind: "postgres", url: schema.dbUrl } as const;
    const stores = [
      await openStore({ db, pgPoolSize: 2, changesListenUrl: schema.dbUrl }),
      await openStore({ db, pgPoolSize: 2 }),
      await openStore({ db, pgPoolSize: 2 }),
    ];
    // Polls far apart: only what PostgreSQL tells comes within the test's wait.
    const env = { CHANGES_POLL_SECONDS: "3600" };
    const apps = await Promise.all(stores.map((store) => buildTestApp({ store, env })));
    try {
      const [listening, writing, polling] = await Promise.all(
        apps.map((app) => listenLocally(app)),
      );
      const token = await tokenFor(apps[0] as App);
      const told = openStream(`${listening}/changes`, token);
      const notTold = openStream(`${polling}/changes`, token);
      assert.equal((await told.opened).status, 200);
      assert.equal((await notTold.opened).status, 200);
      const written = await fetch(`${writing}/book`, {
        method: "POST",
        headers: { authorization: token, "content-type": "application/json" },
        body: JSON.stringify(DUNE),
      });
      assert.equal(written.status, 201);
      await told.until(() => told.events.length === 1, 3_000);
      assert.equal(notTold.events.length, 0);
      told.close();
      notTold.close();
    } finally {
      for (const app of apps) await app.close();
      for (const store of stores) await store.close();
      await schema.drop();
    }
  });
});

test("a follower gone while it catches up is read for no more", async () => {
  const store = openSqliteStore(":memory:");
  const book = { title: "T", author: "A", year: 1 };
  await Promise.all(Array.from({ length: 4 * FEED_PAGE }, () => store.create(book)));
  const log = store.changes as ChangeLog;
  let reads = 0;
  const list: ChangeLog["list"] = (since, limit) => {
    reads += 1;
    return log.list(since, limit);
  };
  const feed = changeFeed({ ...log, list }, 60_000);
  // Its reader is gone once it has had one page of the four behind it.
  let pages = 0;
  await feed.follow(0, {
    ready: async () => pages === 0,
    catchUp: () => pages++,
    take: () => true,
    dropped: () => {},
  });
  // The feed's own read of what is new, and the one page.
  assert.equal(reads, 2);
  assert.equal(pages, 1);
  feed.close();
  await store.close();
});
