// The change log's routes on every store: GET /changes, a book's history, a restore; who is
// named, what readers may do, and the clear 4xx of each refusal.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import type { Book } from "../../src/rules/book.js";
import type { ChangeLog } from "../../src/store/changes.js";
import { describe } from "../support/describe.js";
import {
  type Answer,
  buildTestApp,
  type CallOptions,
  call,
  type OpenedStore,
  storesUnderTest,
  TEST_USERNAME,
  tokenFor,
} from "../support/helpers.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };
const PASSWORD = "twelve chars or more";

interface WireChange {
  seq: number;
  op: string;
  id: number;
  book: Book | null;
  before: Book | null;
  at: string;
  by: { name: string; account: number | null } | null;
}

function assertRefused(answer: Answer, status: number, message: string) {
  assert.equal(answer.status, status, answer.raw);
  assert.deepEqual(answer.body, { status, message, data: null });
}

for (const kind of await storesUnderTest({ sqliteFile: true })) {
  describe(`the change routes on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let app: App;
    let admin: string;
    const tokens: Record<string, string> = {};
    const ids: Record<string, number> = {};
    const send = <T = unknown>(method: string, url: string, options: CallOptions = {}) =>
      call<T>(app, method, url, { token: admin, ...options });
    const latest = () => (opened.store.changes as ChangeLog).latest();

    before(async () => {
      opened = await kind.open();
      app = await buildTestApp({ store: opened.store });
      admin = await tokenFor(app);
      for (const role of ["reader", "librarian"]) {
        const name = `${role}-ana`;
        const added = await send<{ id: number }>("POST", "/accounts", {
          body: { name, role, password: PASSWORD },
        });
        ids[role] = added.body.data?.id as number;
        const login = await call<{ token: string }>(app, "POST", "/token", {
          body: { username: name, password: PASSWORD },
        });
        tokens[role] = login.body.data?.token as string;
      }
    });
    after(async () => {
      await app?.close();
      await opened?.dispose();
    });

    test("every write through the API is listed in order, naming who made it", async () => {
      const since = await latest();
      const created = await send<Book>("POST", "/book", { body: DUNE, token: tokens.librarian });
      const id = created.body.data?.id as number;
      await send("PUT", `/book/${id}`, { body: { year: 1966 } });
      await send("DELETE", `/book/${id}`, { token: tokens.librarian });
      const answer = await send<WireChange[]>("GET", `/changes?since=${since}`, {
        token: tokens.reader,
      });
      assert.equal(answer.status, 200, answer.raw);
      assert.equal(answer.body.message, Messages.changesRetrieved);
      const changes = answer.body.data as WireChange[];
      const librarian = { name: "librarian-ana", account: ids.librarian as number };
      assert.deepEqual(
        changes.map(({ op, id, book, before, by }) => ({ op, id, book, before, by })),
        [
          { op: "create", id, book: { id, ...DUNE }, before: null, by: librarian },
          {
            op: "update",
            id,
            book: { id, ...DUNE, year: 1966 },
            before: { id, ...DUNE },
            by: { name: TEST_USERNAME, account: null },
          },
          { op: "delete", id, book: null, before: { id, ...DUNE, year: 1966 }, by: librarian },
        ],
      );
      for (const change of changes)
        assert.ok(Math.abs(Date.parse(change.at) - Date.now()) < 60_000);
      const last = changes[2]?.seq as number;
      assert.equal(answer.headers.link, `</changes?since=${last}&limit=100>; rel="next"`);
      // Asked again from there: nothing yet, and the same place to go on from.
      const again = await send<WireChange[]>("GET", `/changes?since=${last}&limit=5`);
      assert.deepEqual(again.body.data, []);
      assert.equal(again.headers.link, `</changes?since=${last}&limit=5>; rel="next"`);
    });

    test("a page at a time, following the Link header", async () => {
      const since = await latest();
      for (let i = 0; i < 5; i++) await send("POST", "/book", { body: { ...DUNE, year: i } });
      const years: number[] = [];
      let url = `/changes?since=${since}&limit=2`;
      for (let pages = 0; pages < 5; pages++) {
        const answer = await send<WireChange[]>("GET", url);
        if (answer.body.data?.length === 0) break;
        years.push(...(answer.body.data ?? []).map((c) => c.book?.year as number));
        url = /^<([^>]+)>/.exec(answer.headers.link as string)?.[1] as string;
      }
      assert.deepEqual(years, [0, 1, 2, 3, 4]);
    });

    test("since=now starts from the newest: only what comes next", async () => {
      await send("POST", "/book", { body: DUNE });
      const now = await send<WireChange[]>("GET", "/changes?since=now");
      assert.equal(now.status, 200, now.raw);
      assert.deepEqual(now.body.data, []);
      const newest = await latest();
      assert.equal(now.headers.link, `</changes?since=${newest}&limit=100>; rel="next"`);
      await send("POST", "/book", { body: { ...DUNE, year: 1 } });
      const next = await send<WireChange[]>("GET", `/changes?since=${newest}`);
      assert.deepEqual(
        next.body.data?.map((c) => c.book?.year),
        [1],
      );
    });

    test("bad parameters are 400 Invalid input with a reason; no token is 401", async () => {
      for (const query of [
        "since=-1",
        "since=01",
        "since=x",
        "limit=0",
        "limit=1001",
        "since=1&since=2",
      ]) {
        const answer = await send("GET", `/changes?${query}`);
        assertRefused(answer, 400, Messages.invalidInput);
        assert.match(String(answer.headers["problem-reason"]), /^(since|limit): /, query);
      }
      assertRefused(await call(app, "GET", "/changes"), 401, Messages.tokenRequired);
    });

    test("a since older than what is kept is 410, with what is kept and where to go on", async () => {
      await send("POST", "/book", { body: DUNE });
      const log = opened.store.changes as ChangeLog;
      await log.trim({ days: 30, entries: 0 });
      const newest = await latest();
      const answer = await send("GET", "/changes?since=0");
      assertRefused(answer, 410, Messages.changesGone);
      assert.equal(answer.headers["changes-oldest-kept"], String(newest + 1));
      assert.equal(answer.headers.link, `</changes?since=${newest}>; rel="next"`);
      assert.equal((await send("GET", `/changes?since=${newest}`)).status, 200);
    });

    test("a since past the newest sequence is 410 too: never given here, it would miss the entries before it", async () => {
      await send("POST", "/book", { body: DUNE });
      const newest = await latest();
      assert.equal((await send("GET", `/changes?since=${newest}`)).status, 200);
      const stream = { accept: "text/event-stream" };
      for (const [url, headers] of [
        [`/changes?since=${newest + 1}`, {}],
        [`/changes?since=${newest + 1000}&limit=5`, {}],
        [`/changes?since=${newest + 1}`, stream],
        ["/changes", { ...stream, "last-event-id": String(newest + 1) }],
      ] as const) {
        const answer = await send("GET", url, { headers });
        assertRefused(answer, 410, Messages.changesGone);
        assert.equal(answer.headers.link, `</changes?since=${newest}>; rel="next"`, url);
        const oldest = Number(answer.headers["changes-oldest-kept"]);
        assert.ok(oldest >= 1 && oldest <= newest, `oldest kept ${oldest}`);
        const from = await send<WireChange[]>("GET", `/changes?since=${oldest - 1}&limit=1`);
        assert.equal(from.body.data?.[0]?.seq, oldest);
      }
    });

    test("a book's history, deleted or not; 404 for a book never seen", async () => {
      const created = await send<Book>("POST", "/book", { body: DUNE });
      const id = created.body.data?.id as number;
      await send("PUT", `/book/${id}`, { body: { title: "Dune Messiah" } });
      await send("DELETE", `/book/${id}`);
      const history = await send<WireChange[]>("GET", `/book/${id}/history`, {
        token: tokens.reader,
      });
      assert.equal(history.status, 200, history.raw);
      assert.equal(history.body.message, Messages.historyRetrieved);
      assert.deepEqual(
        history.body.data?.map((c) => c.op),
        ["create", "update", "delete"],
      );
      const later = await send<WireChange[]>(
        "GET",
        `/book/${id}/history?since=${history.body.data?.[0]?.seq}&limit=1`,
      );
      assert.deepEqual(
        later.body.data?.map((c) => c.op),
        ["update"],
      );
      assertRefused(await send("GET", `/book/${id + 1000}/history`), 404, Messages.bookNotFound);
      assertRefused(
        await send("GET", `/book/${id + 1000}/history?since=3`),
        404,
        Messages.bookNotFound,
      );
      assertRefused(await send("GET", "/book/01/history"), 404, Messages.bookNotFound);
      // After its last entry, a deleted book's history is empty, not missing.
      const last = history.body.data?.at(-1)?.seq;
      const after = await send<WireChange[]>("GET", `/book/${id}/history?since=${last}`);
      assert.equal(after.status, 200, after.raw);
      assert.deepEqual(after.body.data, []);
    });

    test("restore: 201 with the book and its ETag, then 409; 404 unknown; 403 for a reader", async () => {
      const created = await send<Book>("POST", "/book", { body: DUNE });
      const book = created.body.data as Book;
      assertRefused(await send("POST", `/book/${book.id}/restore`), 409, Messages.bookExists);
      await send("DELETE", `/book/${book.id}`);
      assertRefused(
        await send("POST", `/book/${book.id}/restore`, { token: tokens.reader }),
        403,
        Messages.forbidden,
      );
      const restored = await send<Book>("POST", `/book/${book.id}/restore`, {
        token: tokens.librarian,
      });
      assert.equal(restored.status, 201, restored.raw);
      assert.deepEqual(restored.body, {
        status: 201,
        message: Messages.bookRestored,
        data: book,
      });
      assert.equal(restored.headers.etag, created.headers.etag);
      assert.deepEqual((await send("GET", `/book/${book.id}`)).body.data, book);
      assertRefused(await send("POST", `/book/${book.id}/restore`), 409, Messages.bookExists);
      assertRefused(
        await send("POST", `/book/${book.id + 1000}/restore`),
        404,
        Messages.bookNotFound,
      );
      const [entry] = (
        (await send<WireChange[]>("GET", `/book/${book.id}/history`)).body.data ?? []
      ).slice(-1);
      assert.deepEqual(entry?.by, { name: "librarian-ana", account: ids.librarian });
      assert.equal(entry?.op, "restore");
    });

    test("Last-Modified: each create, update and restore's time; an update that changes nothing keeps it", async () => {
      const created = await send<Book>("POST", "/book", { body: DUNE });
      const id = created.body.data?.id as number;
      await send("PUT", `/book/${id}`, { body: { year: 1966 } });
      const updated = await send("PUT", `/book/${id}`, { body: { title: "Dune Messiah" } });
      const unchanged = await send("PUT", `/book/${id}`, { body: {} });
      // Each field to the value it has: no change either, and no entry.
      const same = await send("PUT", `/book/${id}`, {
        body: { title: "Dune Messiah", author: DUNE.author, year: 1966 },
      });
      const read = await send("GET", `/book/${id}`);
      const notModified = await app.inject({
        url: `/book/${id}`,
        headers: { authorization: admin, "if-none-match": String(read.headers.etag) },
      });
      await send("DELETE", `/book/${id}`);
      const restored = await send("POST", `/book/${id}/restore`);
      const history = (await send<WireChange[]>("GET", `/book/${id}/history`)).body.data ?? [];
      // Each entry's time, to the second, as an HTTP date.
      const [create, , update, , restore] = history.map((e) => new Date(e.at).toUTCString());
      assert.equal(history.length, 5);
      assert.equal(created.headers["last-modified"], create);
      assert.equal(updated.headers["last-modified"], update);
      assert.equal(same.status, 200);
      for (const answer of [unchanged, same, read, notModified]) {
        assert.equal(answer.headers["last-modified"], update);
      }
      assert.equal(notModified.statusCode, 304);
      assert.equal(restored.headers["last-modified"], restore);
      assert.equal((await send("GET", `/book/${id}`)).headers["last-modified"], restore);
      assert.equal((await send("DELETE", `/book/${id}`)).headers["last-modified"], undefined);
    });
  });
}
