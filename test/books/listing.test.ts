// GET /books with the optional listing parameters: limit, after, q, author, year, sort.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import type { Book } from "../../src/rules/book.js";
import { SEARCH_BOUNDS } from "../../src/store/sqlite/listing.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { describe } from "../support/describe.js";
import {
  type Answer,
  buildTestApp,
  call,
  type OpenedStore,
  storesUnderTest,
  tokenFor,
} from "../support/helpers.js";

/** Every page of a listing from its first, following Link rel=next. */
async function walk(app: App, token: string, first: string) {
  const books: Book[] = [];
  const links: string[] = [];
  for (let next: string | undefined = first; next; ) {
    const answer: Answer<Book[]> = await call<Book[]>(app, "GET", next, { token });
    assert.equal(answer.status, 200, answer.raw);
    assert.equal(answer.body.message, Messages.booksRetrieved);
    books.push(...(answer.body.data as Book[]));
    const link = answer.headers.link as string | undefined;
    if (link) links.push(link);
    next = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
  }
  return { books, links };
}

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
      const { books: seen, links } = await walk(app, token, "/books?limit=10");
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

    test("q finds words of the title or the author, in any case; author and year match exactly", async () => {
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

    test("the Link carries the listing's own parameters, never others the caller sent", async () => {
      const answer = await list("?limit=2&token=SECRETVALUE&debug=1&year=1800");
      assert.equal(answer.status, 200);
      const link = String(answer.headers.link);
      assert.match(link, /^<\/books\?limit=2&year=1800&after=\d+>; rel="next"$/);
    });

    test("q: words in any order, each the start of a word, case and accents aside, in every script", async () => {
      const shelf = [
        { title: "Les Misérables", author: "Victor Hugo", year: 1862 },
        { title: "Преступление и наказание", author: "Фёдор Достоевский", year: 1866 },
        { title: "Братья Карамазовы", author: "Фёдор Достоевский", year: 1880 },
        { title: "Cien años de soledad", author: "Gabriel García Márquez", year: 1967 },
        { title: "The Hobbit", author: "J. R. R. Tolkien", year: 1937 },
        { title: "The Left Hand of Darkness", author: "Ursula K. Le Guin", year: 1969 },
        { title: "Ἰλιάς", author: "Ὅμηρος", year: -750 },
        { title: "吾輩は猫である", author: "夏目漱石", year: 1905 },
      ];
      const added: Book[] = [];
      for (const book of shelf) {
        added.push(
          (await call<Book>(app, "POST", "/book", { token, body: book })).body.data as Book,
        );
      }
      const titles = async (q: string) => {
        const answer = await list(`?q=${encodeURIComponent(q)}`);
        assert.equal(answer.status, 200, answer.raw);
        return (answer.body.data as Book[]).map((b) => b.title);
      };
      assert.deepEqual(await titles("достоевский"), [
        "Преступление и наказание",
        "Братья Карамазовы",
      ]);
      assert.deepEqual(await titles("ДОСТОЕВСКИЙ карамаз"), ["Братья Карамазовы"]);
      assert.deepEqual(await titles("garcia"), ["Cien años de soledad"]);
      assert.deepEqual(await titles("GARCÍA"), ["Cien años de soledad"]);
      assert.deepEqual(await titles("MISERABLES"), ["Les Misérables"]);
      assert.deepEqual(await titles("tolk"), ["The Hobbit"]);
      assert.deepEqual(await titles("le guin"), ["The Left Hand of Darkness"]);
      assert.deepEqual(await titles("guin, le!"), ["The Left Hand of Darkness"]);
      assert.deepEqual(await titles("ιλιας ομηρ"), ["Ἰλιάς"]);
      assert.deepEqual(await titles("夏目漱石"), ["吾輩は猫である"]);
      assert.deepEqual(await titles("olkien"), []);
      for (const book of added) await call(app, "DELETE", `/book/${book.id}`, { token });
    });

    test("q pages with Link, in id order and sorted, with the other filters", async () => {
      const novels = created.filter((b) => b.title.startsWith("Novel"));
      const byId = await walk(app, token, "/books?q=nov&limit=4");
      assert.deepEqual(byId.books, novels);
      const byTitle = await walk(app, token, "/books?q=nov%20jul&sort=-title&limit=3");
      const expected = novels
        .filter((b) => b.author === "Jules Verne")
        .sort((x, y) => (x.title < y.title ? 1 : -1));
      assert.deepEqual(byTitle.books, expected);
      assert.ok(
        byTitle.links.every((link) => link.includes("q=nov+jul")),
        byTitle.links.join(),
      );
      const filtered = await walk(app, token, "/books?q=poems&year=1801&sort=year&limit=1");
      assert.deepEqual(
        filtered.books,
        created.filter((b) => b.title.startsWith("Collected") && b.year === 1801),
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
      // No letter or digit: no word to look for, refused as an empty q is.
      "?q=*",
      "?q=%2A%2A%20-",
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

  describe(`sorted listings on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let app: App;
    let token: string;
    const books: Book[] = [];
    const list = (query: string) => call<Book[]>(app, "GET", `/books${query}`, { token });

    // What a librarian expects: titles and authors in alphabetical order whatever their case,
    // equal values in id order.
    const by = (field: "id" | "title" | "author" | "year", descending = false) => {
      const value = (b: Book) => (typeof b[field] === "string" ? b[field].toLowerCase() : b[field]);
      return [...books].sort((a, b) => {
        const [x, y] = [value(a), value(b)];
        const order = x < y ? -1 : x > y ? 1 : a.id - b.id;
        return descending ? -order : order;
      });
    };

    before(async () => {
      opened = await kind.open();
      app = await buildTestApp({ store: opened.store });
      token = await tokenFor(app);
      const titles = ["dune", "Emma", "beloved", "Dune", "ulysses", "Beloved", "emma", "Zazie"];
      const authors = ["le Guin", "Austen", "Morrison", "Herbert", "Joyce", "Atwood"];
      for (let i = 0; i < 23; i++) {
        const book = {
          title: `${titles[i % titles.length]}${i % 3 === 0 ? "" : ` ${i % 4}`}`,
          author: authors[i % authors.length] as string,
          year: 1900 + ((i * 7) % 5),
        };
        books.push(
          (await call<Book>(app, "POST", "/book", { token, body: book })).body.data as Book,
        );
      }
    });
    after(async () => {
      await app?.close();
      await opened?.dispose();
    });

    for (const field of ["id", "title", "author", "year"] as const) {
      for (const descending of [false, true]) {
        const sort = `${descending ? "-" : ""}${field}`;
        test(`sort=${sort}: whole, and page by page with the cursor in the Link`, async () => {
          const expected = by(field, descending);
          assert.deepEqual((await list(`?sort=${sort}`)).body.data, expected);
          const { books: paged, links } = await walk(app, token, `/books?sort=${sort}&limit=5`);
          assert.deepEqual(paged, expected);
          assert.equal(links.length, 4);
          const last = expected[4] as Book;
          const key =
            field === "id" ? "" : `&${new URLSearchParams({ after_key: `${last[field]}` })}`;
          assert.equal(
            links[0],
            `</books?sort=${sort}&limit=5&after=${last.id}${key}>; rel="next"`,
          );
        });
      }
    }

    test("a sorted walk goes on when the book its cursor names is deleted", async () => {
      const first = await list("?sort=title&limit=4");
      const next = /^<([^>]+)>/.exec(first.headers.link as string)?.[1] as string;
      const cursorBook = (first.body.data as Book[])[3] as Book;
      assert.equal((await call(app, "DELETE", `/book/${cursorBook.id}`, { token })).status, 200);
      books.splice(
        books.findIndex((b) => b.id === cursorBook.id),
        1,
      );
      const rest = await walk(app, token, next);
      assert.deepEqual([...(first.body.data as Book[]).slice(0, 3), ...rest.books], by("title"));
    });

    test("sort with filters: Morrison's books by year, newest first", async () => {
      const answer = await list("?author=Morrison&sort=-year");
      const expected = by("year", true).filter((b) => b.author === "Morrison");
      assert.ok(expected.length > 1);
      assert.deepEqual(answer.body.data, expected);
      const found = await walk(app, token, "/books?q=EMMA&sort=author&limit=2");
      assert.deepEqual(
        found.books,
        by("author").filter((b) => b.title.toLowerCase().includes("emma")),
      );
    });

    for (const query of [
      "?sort=name",
      "?sort=TITLE",
      "?sort=--title",
      "?sort=title&sort=year",
      "?sort=title&after=3",
      "?sort=title&after_key=Dune",
      "?after=3&after_key=Dune",
      "?sort=id&after=3&after_key=3",
      "?sort=year&after=3&after_key=nineteen",
      "?sort=title&after=3&after_key=",
    ]) {
      test(`400 Invalid input for ${query}`, async () => {
        const answer = await list(query);
        assert.deepEqual(answer.body, { status: 400, message: Messages.invalidInput, data: null });
      });
    }
  });
}

describe("a search of many matches on SQLite, through GET /books", () => {
  test("pages cut short by the bound of work still carry a Link, and the walk finds every match", async () => {
    // Bounds small enough that 120 books need windows: at most 10 books examined a page.
    const store = openSqliteStore(":memory:", { ...SEARCH_BOUNDS, fewMatches: 3, window: 10 });
    const app = await buildTestApp({ store });
    const token = await tokenFor(app);
    const books: Book[] = [];
    for (let i = 0; i < 120; i++) {
      const body = {
        title: `${i % 9 === 0 ? "Common" : "Other"} ${String((i * 37) % 120).padStart(3, "0")}`,
        author: "Anon",
        year: 2000,
      };
      books.push((await call<Book>(app, "POST", "/book", { token, body })).body.data as Book);
    }
    const expected = books
      .filter((b) => b.title.startsWith("Common"))
      .sort((x, y) => (x.title < y.title ? -1 : 1));
    const { books: found, links } = await walk(app, token, "/books?q=comm&sort=title&limit=5");
    assert.deepEqual(found, expected);
    // Some page held fewer than 5 books and still led on.
    assert.ok(links.length > Math.ceil(expected.length / 5), links.join("\n"));
    // Without limit, the whole answer at once.
    const all = await call<Book[]>(app, "GET", "/books?q=comm&sort=title", { token });
    assert.deepEqual(all.body.data, expected);
    await app.close();
    await store.close();
  });
});
