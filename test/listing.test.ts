// GET /books with the optional listing parameters: limit, after, q, author, year.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { App } from "../src/app.js";
import type { Book } from "../src/books/book.js";
import { Messages } from "../src/envelope.js";
import {
  type Answer,
  buildTestApp,
  call,
  type OpenedStore,
  storesUnderTest,
  tokenFor,
} from "./helpers.js";

for (const kind of await storesUnderTest()) {
  describe(`listing parameters on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let app: App;
    let token: string;
    const created: Book[] = [];
    const list = (query: string) => call<Book[]>(app, "GET", `/books${query}`, { token });

    before(async () => {
      opened = await kind.open();
      app = await buildTestApp({ store: opened.store });
      token = await tokenFor(app);
      for (let i = 0; i < 25; i++) {
        const book = {
          title: i % 5 === 0 ? `Collected Poems ${i}` : `Novel ${i}`,
          author: i % 2 === 0 ? "Mary Shelley" : "Jules Verne",
          year: 1800 + (i % 3),
        };
        created.push(
          (await call<Book>(app, "POST", "/book", { token, body: book })).body.data as Book,
        );
      }
    });
    after(async () => {
      await app?.close();
      await opened?.dispose();
    });

    test("with no parameter, every book, as specified", async () => {
      const answer = await list("");
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body.data, created);
      assert.equal(answer.headers.link, undefined);
    });

    test("limit and after walk the catalogue page by page, following Link rel=next", async () => {
      const seen: Book[] = [];
      let next: string | undefined = "/books?limit=10";
      const links: string[] = [];
      while (next) {
        const answer: Answer<Book[]> = await call<Book[]>(app, "GET", next, { token });
        assert.equal(answer.status, 200);
        assert.equal(answer.body.message, Messages.booksRetrieved);
        seen.push(...(answer.body.data as Book[]));
        const link = answer.headers.link as string | undefined;
        next = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
        if (link) links.push(link);
      }
      assert.deepEqual(seen, created);
      assert.deepEqual(links, [
        `</books?limit=10&after=${created[9]?.id}>; rel="next"`,
        `</books?limit=10&after=${created[19]?.id}>; rel="next"`,
      ]);
    });

    test("no Link on a full last page", async () => {
      const answer = await list(`?limit=5&after=${created[19]?.id}`);
      assert.deepEqual(answer.body.data, created.slice(20));
      assert.equal(answer.headers.link, undefined);
    });

    test("q finds text in the title or the author, in any case; author and year match exactly", async () => {
      const ids = async (query: string) =>
        ((await list(query)).body.data as Book[]).map((b) => b.id);
      const poems = created.filter((b) => b.title.startsWith("Collected"));
      assert.deepEqual(
        await ids("?q=poems"),
        poems.map((b) => b.id),
      );
      assert.deepEqual(
        await ids("?q=VERNE"),
        created.filter((b) => b.author === "Jules Verne").map((b) => b.id),
      );
      assert.deepEqual(
        await ids("?author=Mary%20Shelley&year=1801"),
        created.filter((b) => b.author === "Mary Shelley" && b.year === 1801).map((b) => b.id),
      );
      assert.deepEqual(await ids("?author=mary%20shelley"), []);
    });

    test("filters and pages together keep the filters in the Link", async () => {
      const answer = await list("?q=novel&year=1800&limit=2");
      const matching = created.filter((b) => b.title.startsWith("Novel") && b.year === 1800);
      assert.deepEqual(answer.body.data, matching.slice(0, 2));
      assert.equal(
        answer.headers.link,
        `</books?q=novel&year=1800&limit=2&after=${matching[1]?.id}>; rel="next"`,
      );
    });

    for (const query of [
      "?limit=0",
      "?limit=1001",
      "?limit=abc",
      "?limit=01",
      "?limit=-1",
      "?limit=5&limit=6",
      "?after=-1",
      "?after=01",
      "?after=1.5",
      "?after=9007199254740992",
      "?year=1e3",
      "?year=10000",
      "?year=",
      "?q=",
      "?q=%20%20",
      `?q=${"x".repeat(201)}`,
      "?author=",
      "?q=%00",
    ]) {
      test(`400 Invalid input for ${query.slice(0, 40)}`, async () => {
        const answer = await list(query);
        assert.deepEqual(answer.body, { status: 400, message: Messages.invalidInput, data: null });
      });
    }

    test("the token still comes first", async () => {
      const answer = await call(app, "GET", "/books?limit=0");
      assert.equal(answer.status, 401);
    });
  });
}
