// GET /books with `Prefer: count=exact`: the number of books the filters match, in
// X-Total-Count, counted only when asked.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import type { Book } from "../../src/rules/book.js";
import type { BookStore } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  call,
  type OpenedStore,
  storesUnderTest,
  tokenFor,
} from "../support/helpers.js";

const COUNT = { prefer: "count=exact" };

for (const kind of await storesUnderTest()) {
  describe(`total counts on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let app: App;
    let token: string;
    let counted = 0;
    const list = (query: string, headers: Record<string, string> = {}) =>
      call<Book[]>(app, "GET", `/books${query}`, { token, headers });

    before(async () => {
      opened = await kind.open();
      // The store, with each count it is asked for noted: a listing must not count unasked.
      const store: BookStore = {
        ...opened.store,
        count: (filters) => {
          counted += 1;
          return opened.store.count(filters);
        },
      };
      app = await buildTestApp({ store });
      token = await tokenFor(app);
      for (let i = 0; i < 12; i++) {
        const book = { title: `Tale ${i}`, author: i % 3 === 0 ? "Grimm" : "Andersen", year: 1812 };
        await call(app, "POST", "/book", { token, body: book });
      }
    });
    after(async () => {
      await app?.close();
      await opened?.dispose();
    });

    test("asked: every page tells the total its filters match, whatever limit, cursor and sort", async () => {
      const first = await list("?limit=5", COUNT);
      assert.equal(first.headers["x-total-count"], "12");
      assert.equal(first.headers["preference-applied"], "count=exact");
      assert.equal(first.body.data?.length, 5);
      const next = /^<([^>]+)>/.exec(first.headers.link as string)?.[1] as string;
      const second = await call<Book[]>(app, "GET", next, { token, headers: COUNT });
      assert.equal(second.headers["x-total-count"], "12");
      const grimm = await list("?author=Grimm&sort=-title&limit=2", COUNT);
      assert.equal(grimm.headers["x-total-count"], "4");
      const whole = await list("?q=ANDER%20tal", { prefer: "return=minimal, count=exact" });
      assert.equal(whole.headers["x-total-count"], "8");
      assert.equal(whole.body.data?.length, 8);
      assert.equal((await list("?q=nobody", COUNT)).headers["x-total-count"], "0");
    });

    test("not asked: no header, and the store is never asked to count", async () => {
      const before = counted;
      const unasked: Record<string, string>[] = [
        {},
        { prefer: "return=minimal" },
        { prefer: "count=planned" },
      ];
      for (const headers of unasked) {
        const answer = await list("?limit=5", headers);
        assert.equal(answer.status, 200);
        assert.equal(answer.headers["x-total-count"], undefined);
        assert.equal(answer.headers["preference-applied"], undefined);
      }
      assert.equal(counted, before);
    });

    test("the listing's answer is the same with or without the count", async () => {
      const plain = await list("?sort=title&limit=4");
      const asked = await list("?sort=title&limit=4", COUNT);
      assert.equal(asked.raw, plain.raw);
      assert.equal(asked.headers.link, plain.headers.link);
    });
  });
}
