// Conditional requests (decisions.md): ETag on every answer with one book, If-Match on PUT and
// DELETE refused with 412 when the book changed meanwhile, If-None-Match on GET giving 304.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import type { Book } from "../../src/rules/book.js";
import { describe } from "../support/describe.js";
import {
  type Answer,
  buildTestApp,
  type CallOptions,
  call,
  type OpenedStore,
  storesUnderTest,
  tokenFor,
} from "../support/helpers.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };

function assertChanged(answer: Answer) {
  assert.equal(answer.status, 412, answer.raw);
  assert.deepEqual(answer.body, { status: 412, message: Messages.bookChanged, data: null });
}

for (const kind of await storesUnderTest()) {
  describe(`conditional requests on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let app: App;
    let token: string;
    const send = (method: string, url: string, options: CallOptions = {}) =>
      call(app, method, url, { token, ...options });
    const created = async () => {
      const answer = await send("POST", "/book", { body: DUNE });
      assert.equal(answer.status, 201, answer.raw);
      return { book: answer.body.data as Book, etag: answer.headers.etag as string };
    };

    before(async () => {
      opened = await kind.open();
      app = await buildTestApp({ store: opened.store });
      token = await tokenFor(app);
    });
    after(async () => {
      await app?.close();
      await opened?.dispose();
    });

    test("every answer with one book has a strong ETag that moves with the book", async () => {
      const { book, etag } = await created();
      assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
      const read = await send("GET", `/book/${book.id}`);
      assert.equal(read.headers.etag, etag);
      const unchanged = await send("PUT", `/book/${book.id}`, { body: { year: 1965 } });
      assert.equal(unchanged.headers.etag, etag, "the same fields, the same version");
      const changed = await send("PUT", `/book/${book.id}`, { body: { year: 1966 } });
      assert.equal(changed.status, 200);
      assert.notEqual(changed.headers.etag, etag);
      assert.equal((await send("GET", `/book/${book.id}`)).headers.etag, changed.headers.etag);
      const other = await created();
      assert.notEqual(other.etag, etag, "another book with the same fields has its own");
    });

    test("two librarians edit one book: the second save is 412 and the first stands", async () => {
      const { book, etag } = await created();
      const first = await send("PUT", `/book/${book.id}`, {
        body: { title: "Dune (first edition)" },
        headers: { "if-match": etag },
      });
      assert.equal(first.status, 200, first.raw);
      const second = await send("PUT", `/book/${book.id}`, {
        body: { title: "Dune Messiah" },
        headers: { "if-match": etag },
      });
      assertChanged(second);
      const stored = await send("GET", `/book/${book.id}`);
      assert.equal((stored.body.data as Book).title, "Dune (first edition)");
      const retried = await send("PUT", `/book/${book.id}`, {
        body: { title: "Dune Messiah" },
        headers: { "if-match": `"stale", ${first.headers.etag as string}` },
      });
      assert.equal(retried.status, 200, "any listed version matches");
    });

    test("concurrent saves on one version: exactly one succeeds", async () => {
      const { book, etag } = await created();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          send("PUT", `/book/${book.id}`, {
            body: { title: `Edit ${i}` },
            headers: { "if-match": etag },
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      assert.deepEqual(statuses, [200, 412, 412, 412, 412, 412, 412, 412]);
      const winner = answers.find((answer) => answer.status === 200)?.body.data as Book;
      assert.deepEqual((await send("GET", `/book/${book.id}`)).body.data, winner);
    });

    test("DELETE with a stale If-Match is 412 and deletes nothing; with * it deletes", async () => {
      const { book, etag } = await created();
      await send("PUT", `/book/${book.id}`, { body: { year: 1970 } });
      assertChanged(await send("DELETE", `/book/${book.id}`, { headers: { "if-match": etag } }));
      assert.equal((await send("GET", `/book/${book.id}`)).status, 200);
      const weak = await send("DELETE", `/book/${book.id}`, {
        headers: { "if-match": `W/${etag}` },
      });
      assertChanged(weak);
      const any = await send("DELETE", `/book/${book.id}`, { headers: { "if-match": "*" } });
      assert.equal(any.status, 200);
      assert.equal((await send("GET", `/book/${book.id}`)).status, 404);
    });

    test("If-Unmodified-Since and If-None-Match guard a write too, in RFC 9110's order", async () => {
      const { book, etag } = await created();
      const url = `/book/${book.id}`;
      let year = 1990;
      /** A PUT that changes the book, on these conditions. */
      const put = (headers: Record<string, string>) => {
        year += 1;
        return send("PUT", url, { body: { year }, headers });
      };
      const early = "Thu, 01 Jan 1970 00:00:01 GMT";
      assertChanged(await put({ "if-unmodified-since": early }));
      assertChanged(await send("DELETE", url, { headers: { "if-unmodified-since": early } }));
      for (const none of ["*", etag, `W/${etag}`, `"other", ${etag}`]) {
        assertChanged(await put({ "if-none-match": none }));
        assertChanged(await send("DELETE", url, { headers: { "if-none-match": none } }));
      }
      assert.equal((await send("GET", url)).headers.etag, etag, "nothing was written");
      // If-Match decides, and If-Unmodified-Since is then not asked; a date that is none is
      // ignored; the second the book was last changed passes, as does another version.
      assert.equal((await put({ "if-match": etag, "if-unmodified-since": early })).status, 200);
      assert.equal((await put({ "if-unmodified-since": "not a date" })).status, 200);
      const last = String((await send("GET", url)).headers["last-modified"]);
      const passed = await put({ "if-unmodified-since": last, "if-none-match": '"other"' });
      assert.equal(passed.status, 200, passed.raw);
      const missing = { body: { year: 1 }, headers: { "if-none-match": "*" } };
      assert.equal((await send("PUT", "/book/999999", missing)).status, 404);
    });

    test("If-Unmodified-Since counts in RFC 9110's three date forms; any other text is ignored", async () => {
      const { book } = await created();
      const url = `/book/${book.id}`;
      let year = 1990;
      const put = (since: string) => {
        year += 1;
        return send("PUT", url, { body: { year }, headers: { "if-unmodified-since": since } });
      };
      // 1994, each way (a two-digit year more than 50 years ahead is the century before).
      for (const early of [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
      ]) {
        assertChanged(await put(early));
      }
      // Text a lenient parser reads as a date long past, and dates that are no HTTP-date.
      for (const other of [
        "2024",
        "0",
        "12",
        "-1",
        "Book 7",
        "1994-11-06",
        "Mon, 30 Feb 1994 08:49:37 GMT",
      ]) {
        const answer = await put(other);
        assert.equal(answer.status, 200, `${other}: ${answer.raw}`);
      }
    });

    test("a missing book is 404 before any precondition", async () => {
      for (const method of ["PUT", "DELETE"]) {
        const answer = await send(method, "/book/999999", {
          headers: { "if-match": '"whatever"' },
          ...(method === "PUT" ? { body: { year: 1 } } : {}),
        });
        assert.equal(answer.status, 404, `${method}: ${answer.raw}`);
      }
    });

    test("GET with a matching If-None-Match is 304 with no body", async () => {
      const { book, etag } = await created();
      const cached = await app.inject({
        method: "GET",
        url: `/book/${book.id}`,
        headers: { authorization: token, "if-none-match": `W/${etag}` },
      });
      assert.equal(cached.statusCode, 304);
      assert.equal(cached.body, "");
      assert.equal(cached.headers.etag, etag);
      const stale = await send("GET", `/book/${book.id}`, {
        headers: { "if-none-match": '"older"' },
      });
      assert.equal(stale.status, 200);
      assert.deepEqual(stale.body.data, book);
    });

    test("without the headers, the answers are the contract's", async () => {
      const { book } = await created();
      const updated = await send("PUT", `/book/${book.id}`, { body: { year: 1999 } });
      assert.deepEqual(updated.body, {
        status: 200,
        message: Messages.bookUpdated,
        data: { ...book, year: 1999 },
      });
      const deleted = await send("DELETE", `/book/${book.id}`);
      assert.deepEqual(deleted.body, { status: 200, message: Messages.bookDeleted, data: null });
    });
  });
}
