// The typed client's change feed: the stream parsed as browsers parse it, followed across its
// ends (a token expiring, a cut connection, a refusal for now) with nothing missed or repeated,
// a 410 as a ChangesGoneError, a book's history and its restore.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { createTokenService } from "../../src/auth/tokens.js";
import {
  type Change,
  ChangesGoneError,
  createClient,
  eventStreamParser,
} from "../../src/client/client.js";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import type { ChangeLog } from "../../src/store/changes.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import type { BookStore } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  listenLocally,
  TEST_PASSWORD,
  TEST_SECRET,
  TEST_USERNAME,
} from "../support/helpers.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };

/** A token of the built-in pair that expires in `seconds`, signed as the service signs. */
function shortToken(seconds: number): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const input = `${part({ alg: "HS256", typ: "JWT" })}.${part({ exp: Math.floor(Date.now() / 1000) + seconds })}`;
  return `${input}.${createHmac("sha256", TEST_SECRET).update(input).digest("base64url")}`;
}

/** The first `count` entries of the iterator, which is then left (its stream closed). */
async function take(changes: AsyncGenerator<Change>, count: number): Promise<Change[]> {
  const taken: Change[] = [];
  for await (const change of changes) {
    taken.push(change);
    if (taken.length === count) break;
  }
  return taken;
}

test("the stream is parsed as browsers parse it: data lines joined, comments skipped, any line end", () => {
  const parser = eventStreamParser();
  const chunks = [
    ": heartbeat\r\n\r\nretry: 2000\r\n\r",
    '\nid: 1\r\nevent: create\r\ndata: {"a":\r\ndata:1}\r',
    "\n\r\nid: 2\nevent: delete\ndata\n\n: only a comment\n\n",
    "event: update\rdata: x\r\rdata: no blank line yet",
  ];
  const events = chunks.flatMap((chunk) => parser.push(chunk));
  assert.deepEqual(events, [
    { event: "create", data: '{"a":\n1}', id: "1" },
    { event: "delete", data: "", id: "2" },
    { event: "update", data: "x", id: "2" },
  ]);
  assert.equal(parser.retry, 2000);
  assert.deepEqual(parser.push("\n\n"), [{ event: "message", data: "no blank line yet", id: "2" }]);
});

describe("the change feed of a live service (tokens of 3 s)", () => {
  let store: BookStore;
  let app: App;
  let base: string;
  const tokens = createTokenService(TEST_SECRET);
  const credentials = { username: TEST_USERNAME, password: TEST_PASSWORD };
  const latest = () => (store.changes as ChangeLog).latest();

  before(async () => {
    store = openSqliteStore(":memory:");
    // Every token issued lasts 3 s, so a stream ends (with its token) within a test.
    app = await buildTestApp({ store, tokens: { ...tokens, issue: () => shortToken(3) } });
    base = await listenLocally(app);
  });
  after(async () => {
    await app?.close();
  });

  test("follows the entries after `since`, then each write as it is answered", async () => {
    const client = createClient({ baseUrl: base, ...credentials });
    const since = await latest();
    const first = await client.createBook({ ...DUNE, year: 1 });
    await client.updateBook(first.id, { year: 2 });
    const changes = client.changes({ since });
    const next = async () => (await changes.next()).value as Change;
    const caught = [await next(), await next()];
    await client.createBook({ ...DUNE, year: 3 });
    caught.push(await next());
    await changes.return(undefined);
    assert.deepEqual(
      caught.map((change) => [change.op, change.book?.year, change.before?.year]),
      [
        ["create", 1, undefined],
        ["update", 2, 1],
        ["create", 3, undefined],
      ],
    );
    assert.equal(caught[0]?.seq, since + 1);
    assert.deepEqual(caught[0]?.by, { name: TEST_USERNAME, account: null });
    assert.match(caught[0]?.at ?? "", /^\d{4}-\d\d-\d\dT.*Z$/);
  });

  test("the stream ends with its token; the client reconnects with a fresh one and misses nothing", async () => {
    let fetched = 0;
    const follower = createClient({ baseUrl: base, ...credentials, onToken: () => fetched++ });
    const writer = createClient({ baseUrl: base, ...credentials });
    const since = await latest();
    const years = Array.from({ length: 16 }, (_, i) => 2000 + i);
    // Writes over 8 s, across at least two ends of the stream.
    const writing = (async () => {
      for (const year of years) {
        await writer.createBook({ ...DUNE, year });
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const seen = await take(follower.changes({ since }), years.length);
    await writing;
    assert.deepEqual(
      seen.map((change) => change.book?.year),
      years,
    );
    assert.deepEqual(
      seen.map((change) => change.seq),
      years.map((_, i) => since + 1 + i),
    );
    assert.ok(fetched >= 3, `${fetched} tokens fetched: the stream was opened again`);
  });

  test("a signal ends the iteration, with its reason", async () => {
    const client = createClient({ baseUrl: base, ...credentials });
    const controller = new AbortController();
    const changes = client.changes({ since: await latest(), signal: controller.signal });
    const waiting = changes.next();
    setTimeout(() => controller.abort(), 200);
    await assert.rejects(waiting, { name: "AbortError" });
    assert.deepEqual(await changes.next(), { done: true, value: undefined });
  });

  test("pages follow one another; a book's history; a deleted book restored, once", async () => {
    const client = createClient({ baseUrl: base, ...credentials });
    const since = await latest();
    const book = await client.createBook(DUNE);
    await client.updateBook(book.id, { year: 1966 });
    await client.deleteBook(book.id);
    const first = await client.changesPage({ since, limit: 2 });
    assert.deepEqual(
      first.changes.map((change) => change.op),
      ["create", "update"],
    );
    assert.equal(first.next, since + 2);
    const second = await client.changesPage({ since: first.next, limit: 2 });
    assert.deepEqual(
      second.changes.map((change) => [change.op, change.before?.year]),
      [["delete", 1966]],
    );
    assert.deepEqual(await client.changesPage({ since: second.next }), {
      changes: [],
      next: second.next,
    });
    assert.deepEqual(await client.restore(book.id), { ...book, year: 1966 });
    await assert.rejects(client.restore(book.id), { status: 409, message: Messages.bookExists });
    await assert.rejects(client.restore(999_999), { status: 404 });
    assert.deepEqual(
      (await client.history(book.id)).map((change) => change.op),
      ["create", "update", "delete", "restore"],
    );
    await assert.rejects(client.history(999_999), { status: 404 });
  });

  test("a `since` no longer kept: a ChangesGoneError with the oldest kept and where to go on", async () => {
    const client = createClient({ baseUrl: base, ...credentials });
    await client.createBook(DUNE);
    const newest = await latest();
    await (store.changes as ChangeLog).trim({ days: 30, entries: 0 });
    const gone = (error: unknown) => {
      assert.ok(error instanceof ChangesGoneError);
      assert.equal(error.status, 410);
      assert.equal(error.message, Messages.changesGone);
      assert.equal(error.oldestKept, newest + 1);
      assert.equal(error.resumeSince, newest);
      return true;
    };
    await assert.rejects(client.changes({ since: 0 }).next(), gone);
    await assert.rejects(client.changesPage({ since: 0 }), gone);
    // Once the catalogue is read again, the feed goes on from `resumeSince`.
    const resumed = client.changes({ since: newest });
    const waiting = resumed.next();
    await client.createBook(DUNE);
    assert.equal(((await waiting).value as Change).seq, newest + 1);
    await resumed.return(undefined);
  });
});

/** What a fake service does on its nth stream: its answer, written by hand. */
type Script = (response: ServerResponse, since: string | null) => void;

const entry = (seq: number): Change => ({
  seq,
  op: "create",
  id: seq,
  book: { id: seq, ...DUNE },
  before: null,
  at: new Date(0).toISOString(),
  by: null,
});

/** An entry as an event, its JSON over two data lines, with CRLF line ends. */
const event = (seq: number) => {
  const json = JSON.stringify(entry(seq));
  const at = json.indexOf(",") + 1;
  return `id: ${seq}\r\nevent: create\r\ndata: ${json.slice(0, at)}\r\ndata:${json.slice(at)}\r\n\r\n`;
};

test("a cut connection and a refusal for now are tried again, after the last entry given", async () => {
  const asked: (string | null)[] = [];
  const streamHead = (response: ServerResponse) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write("retry: 50\r\n\r\n: heartbeat\r\n\r\n");
  };
  const scripts: Script[] = [
    (response) => {
      streamHead(response);
      response.write(event(1) + event(2).slice(0, 30));
      setTimeout(() => response.socket?.destroy(), 50);
    },
    (response) => {
      response.writeHead(503, { "content-type": "application/json" });
      response.end(JSON.stringify({ status: 503, message: "Service unavailable", data: null }));
    },
    (response) => {
      streamHead(response);
      response.end(event(1) + event(2) + event(3));
    },
    (response) => {
      streamHead(response);
      response.write(event(4));
    },
  ];
  const server = createServer((request, response) => {
    const since = new URL(request.url ?? "", "http://x").searchParams.get("since");
    asked.push(since);
    scripts[asked.length - 1]?.(response, since);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const payload = Buffer.from(JSON.stringify({ exp: 4_000_000_000 })).toString("base64url");
    const client = createClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: `e30.${payload}.x`,
    });
    const seen = await take(client.changes({ since: 0 }), 4);
    assert.deepEqual(
      seen.map((change) => change.seq),
      [1, 2, 3, 4],
    );
    assert.deepEqual(seen[0], entry(1));
    assert.deepEqual(asked, ["0", "1", "1", "3"]);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
