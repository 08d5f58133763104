// Every row of the specification's tables and every decision of decisions.md that storage
// touches, through app.inject, on each store.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { BUFFERED_LISTING_BYTES, LIST_PAGE_SIZE } from "../../src/books/list-books.js";
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
  TEST_PASSWORD,
  TEST_USERNAME,
  tokenFor,
} from "../support/helpers.js";

const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };

function assertEnvelope(answer: Answer, status: number, message: string) {
  assert.equal(answer.status, status, answer.raw);
  assert.equal(answer.body.status, status);
  assert.equal(answer.body.message, message);
  assert.deepEqual(Object.keys(answer.body).sort(), ["data", "message", "status"]);
  if (status >= 400) assert.equal(answer.body.data, null);
}

// Bodies that are not a usable new book, each with why.
const INVALID_NEW_BOOKS: [string, string][] = [
  ["missing title", JSON.stringify({ author: "A", year: 2000 })],
  ["missing author", JSON.stringify({ title: "T", year: 2000 })],
  ["missing year", JSON.stringify({ title: "T", author: "A" })],
  ["null title", JSON.stringify({ ...DUNE, title: null })],
  ["null year", JSON.stringify({ ...DUNE, year: null })],
  ["numeric title", JSON.stringify({ ...DUNE, title: 42 })],
  ["year as a string", JSON.stringify({ ...DUNE, year: "1965" })],
  ["fractional year", JSON.stringify({ ...DUNE, year: 1965.5 })],
  ["year above 9999", JSON.stringify({ ...DUNE, year: 10000 })],
  ["year below -9999", JSON.stringify({ ...DUNE, year: -10000 })],
  ["year 1e400", `{"title":"T","author":"A","year":1e400}`],
  ["empty title", JSON.stringify({ ...DUNE, title: "" })],
  ["whitespace-only title", JSON.stringify({ ...DUNE, title: " \t\n " })],
  ["whitespace-only author", JSON.stringify({ ...DUNE, author: "   " })],
  // Every Unicode space, U+0085 (next line) too, which JavaScript's \s leaves out.
  ["title of other spaces", JSON.stringify({ ...DUNE, title: "\u0085\u00a0\u2007\u3000" })],
  ["author of a next line", JSON.stringify({ ...DUNE, author: "\u0085" })],
  ["title of 501 characters", JSON.stringify({ ...DUNE, title: "t".repeat(501) })],
  ["author of 301 characters", JSON.stringify({ ...DUNE, author: "a".repeat(301) })],
  ["NUL in title", JSON.stringify({ ...DUNE, title: "Du\u0000ne" })],
  ["lone surrogate in author", `{"title":"T","author":"A\\ud800B","year":1}`],
  ["array body", JSON.stringify([DUNE])],
  ["string body", JSON.stringify("Dune")],
  ["number body", "1965"],
  ["null body", "null"],
  ["malformed JSON", `{"title":"Dune",`],
  ["empty body", ""],
  ["__proto__ key", `{"title":"T","author":"A","year":1,"__proto__":{"admin":true}}`],
  [
    "constructor.prototype",
    `{"title":"T","author":"A","year":1,"constructor":{"prototype":{"x":1}}}`,
  ],
];

// Path ids that are not canonical positive integers within 2^53-1.
const NON_CANONICAL_IDS = [
  "0",
  "-1",
  "01",
  "1.0",
  "1e3",
  "0x1",
  "abc",
  "true",
  "%201",
  "1%20",
  "9007199254740992",
  "99999999999999999999999",
  "1".repeat(300),
];

for (const kind of await storesUnderTest({ sqliteFile: true })) {
  describe(`contract on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let app: App;
    let token: string;
    const send = (method: string, url: string, options: CallOptions = {}) =>
      call(app, method, url, { token, ...options });
    const createBook = async (book: object = DUNE) => {
      const answer = await send("POST", "/book", { body: book });
      assert.equal(answer.status, 201, answer.raw);
      return answer.body.data as Book;
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

    describe("POST /book", () => {
      test("201 Book created successfully, with the created book and its id", async () => {
        const answer = await send("POST", "/book", { body: DUNE });
        assertEnvelope(answer, 201, Messages.bookCreated);
        const book = answer.body.data as Book;
        assert.ok(Number.isSafeInteger(book.id) && book.id > 0, `id ${book.id}`);
        assert.deepEqual(book, { id: book.id, ...DUNE });
      });

      test("the returned id is usable in GET, PUT and DELETE paths", async () => {
        const { id } = await createBook();
        assertEnvelope(await send("GET", `/book/${id}`), 200, Messages.bookRetrieved);
        assertEnvelope(await send("PUT", `/book/${id}`, { body: {} }), 200, Messages.bookUpdated);
        assertEnvelope(await send("DELETE", `/book/${id}`), 200, Messages.bookDeleted);
      });

      for (const [why, payload] of INVALID_NEW_BOOKS) {
        test(`400 Invalid input: ${why}`, async () => {
          const answer = await send("POST", "/book", {
            payload,
            headers: { "content-type": "application/json" },
          });
          assertEnvelope(answer, 400, Messages.invalidInput);
        });
      }

      test("400 Invalid input for bytes that are not UTF-8; nothing is stored altered", async () => {
        const before = (await send("GET", "/books")).body.data as Book[];
        const bad = Buffer.concat([
          Buffer.from('{"title":"bad'),
          Buffer.from([0xff]),
          Buffer.from('","author":"A","year":1}'),
        ]);
        assertEnvelope(await send("POST", "/book", { payload: bad }), 400, Messages.invalidInput);
        // An overlong encoding of "/" and a lone surrogate's bytes: not UTF-8 either.
        for (const bytes of [
          [0xc0, 0xaf],
          [0xed, 0xa0, 0x80],
        ]) {
          const payload = Buffer.concat([
            Buffer.from('{"title":"x'),
            Buffer.from(bytes),
            Buffer.from('","author":"A","year":1}'),
          ]);
          assertEnvelope(await send("POST", "/book", { payload }), 400, Messages.invalidInput);
        }
        const book = await createBook();
        const change = Buffer.concat([
          Buffer.from('{"title":"M'),
          Buffer.from([0xe9]),
          Buffer.from('lanie"}'),
        ]);
        assertEnvelope(
          await send("PUT", `/book/${book.id}`, { payload: change }),
          400,
          Messages.invalidInput,
        );
        assert.deepEqual((await send("GET", `/book/${book.id}`)).body.data, book);
        assert.equal(((await send("GET", "/books")).body.data as Book[]).length, before.length + 1);
        // Well-formed UTF-8 of every width is taken as it is.
        const fine = await send("POST", "/book", {
          payload: Buffer.from('{"title":"Mélanie 森 𝄞","author":"A","year":1}'),
        });
        assert.equal((fine.body.data as Book).title, "Mélanie 森 𝄞");
      });

      test("nothing is stored by refused bodies, and __proto__ never reaches a book", async () => {
        await send("POST", "/book", {
          payload: `{"title":"Poisoned","author":"A","year":1,"__proto__":{"year":5}}`,
        });
        const list = await send("GET", "/books");
        const titles = (list.body.data as Book[]).map((b) => b.title);
        assert.ok(!titles.includes("Poisoned"));
        assert.ok(!titles.includes("t".repeat(501)));
      });

      test("boundary values are accepted: 500/300 characters, years -9999 and 9999", async () => {
        // 500 astral characters are 1000 UTF-16 units: length counts characters.
        const title = "📚".repeat(500);
        const author = "a".repeat(300);
        assert.equal((await createBook({ title, author, year: 9999 })).title, title);
        assert.equal((await createBook({ title: "Old", author: "Anon", year: -9999 })).year, -9999);
      });

      test("unknown fields are ignored and a body id does not choose the id", async () => {
        const first = await createBook();
        const book = await createBook({ ...DUNE, id: first.id, isbn: "978-0441013593" });
        assert.notEqual(book.id, first.id);
        assert.deepEqual(Object.keys(book).sort(), ["author", "id", "title", "year"]);
        assert.deepEqual((await send("GET", `/book/${first.id}`)).body.data, first);
      });

      test("the body is read as JSON whatever its Content-Type, or without one", async () => {
        for (const contentType of ["text/plain", "application/x-www-form-urlencoded", undefined]) {
          const answer = await send("POST", "/book", {
            payload: JSON.stringify(DUNE),
            headers: contentType ? { "content-type": contentType } : {},
          });
          assertEnvelope(answer, 201, Messages.bookCreated);
        }
      });

      test("a Content-Type that is no media type changes nothing either", async () => {
        for (const contentType of [
          "json",
          "application",
          "",
          "a/b/c",
          "application/json, text/plain",
        ]) {
          const headers = { "content-type": contentType };
          const created = await send("POST", "/book", { payload: JSON.stringify(DUNE), headers });
          assertEnvelope(created, 201, Messages.bookCreated);
          const { id } = created.body.data as Book;
          const missing = await send("PUT", "/book/999999999", { payload: "{}", headers });
          assertEnvelope(missing, 404, Messages.bookNotFound);
          assertEnvelope(
            await send("DELETE", `/book/${id}`, { headers }),
            200,
            Messages.bookDeleted,
          );
          const login = JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD });
          const issued = await call(app, "POST", "/token", { payload: login, headers });
          assertEnvelope(issued, 200, Messages.tokenGenerated);
        }
      });

      test("strings keep every character: accents, scripts, emoji, quotes", async () => {
        const book = {
          title: 'Cent ans de solitude — «Ñ» "q" 百年孤独 🦋',
          author: "Márquez",
          year: 1967,
        };
        const { id } = await createBook(book);
        assert.deepEqual((await send("GET", `/book/${id}`)).body.data, { id, ...book });
      });
    });

    describe("GET /books", () => {
      test("200 Books retrieved successfully: every book, in ascending id order", async () => {
        const created = [await createBook(), await createBook({ ...DUNE, title: "Dune Messiah" })];
        const answer = await send("GET", "/books");
        assertEnvelope(answer, 200, Messages.booksRetrieved);
        const books = answer.body.data as Book[];
        const ids = books.map((b) => b.id);
        assert.deepEqual(
          ids,
          [...ids].sort((a, b) => a - b),
        );
        for (const book of created)
          assert.deepEqual(
            books.find((b) => b.id === book.id),
            book,
          );
      });

      test("a listing shows every change made since the last listing", async () => {
        const book = await createBook({ ...DUNE, title: "Listed" });
        const listed = async () => (await send("GET", "/books")).body.data as Book[];
        assert.deepEqual(
          (await listed()).find((b) => b.id === book.id),
          book,
        );
        await send("PUT", `/book/${book.id}`, { body: { title: "Listed, revised" } });
        assert.equal((await listed()).find((b) => b.id === book.id)?.title, "Listed, revised");
        await send("DELETE", `/book/${book.id}`);
        assert.equal(
          (await listed()).find((b) => b.id === book.id),
          undefined,
        );
      });

      test("a listing past the buffering budget streams, whole and in order", async () => {
        // 500-character titles: three full pages are well past the budget.
        const title = (i: number) => `${String(i).padStart(5, "0")} ${"t".repeat(494)}`;
        for (let i = 0; i < 3 * LIST_PAGE_SIZE + 7; i++) {
          await opened.store.create({ title: title(i), author: "Long", year: 1 });
        }
        const response = await app.inject({
          method: "GET",
          url: "/books",
          headers: { authorization: token },
        });
        assert.ok(response.body.length > BUFFERED_LISTING_BYTES);
        assert.equal(response.headers["content-length"], undefined, "streamed, not buffered");
        const books = (JSON.parse(response.body) as { data: Book[] }).data;
        const ids = books.map((b) => b.id);
        assert.deepEqual(
          ids,
          [...new Set(ids)].sort((a, b) => a - b),
        );
        const long = books.filter((b) => b.author === "Long").map((b) => b.title);
        assert.deepEqual(
          long,
          Array.from({ length: 3 * LIST_PAGE_SIZE + 7 }, (_, i) => title(i)),
        );
      });

      test("lists all books across the pages it streams, none twice", async () => {
        for (let i = 0; i < LIST_PAGE_SIZE + 3; i++) {
          await opened.store.create({ title: `Volume ${i}`, author: "Series", year: 2000 });
        }
        const answer = await send("GET", "/books");
        assertEnvelope(answer, 200, Messages.booksRetrieved);
        const books = answer.body.data as Book[];
        assert.equal(new Set(books.map((b) => b.id)).size, books.length);
        const volumes = books.filter((b) => b.author === "Series");
        assert.equal(volumes.length, LIST_PAGE_SIZE + 3);
        assert.match(String(answer.headers["content-type"]), /^application\/json/);
      });
    });

    describe("GET /book/{id}", () => {
      test("200 Book retrieved successfully, with the book", async () => {
        const book = await createBook();
        const answer = await send("GET", `/book/${book.id}`);
        assertEnvelope(answer, 200, Messages.bookRetrieved);
        assert.deepEqual(answer.body.data, book);
      });

      test("404 Book not found for an id that does not exist", async () => {
        assertEnvelope(await send("GET", "/book/9007199254740991"), 404, Messages.bookNotFound);
      });

      for (const id of NON_CANONICAL_IDS) {
        test(`404 Book not found for the non-canonical id ${JSON.stringify(id.slice(0, 30))}`, async () => {
          await createBook();
          assertEnvelope(await send("GET", `/book/${id}`), 404, Messages.bookNotFound);
        });
      }
    });

    describe("PUT /book/{id}", () => {
      test("200 Book updated successfully; omitted fields keep their stored values", async () => {
        const book = await createBook();
        const answer = await send("PUT", `/book/${book.id}`, { body: { year: 1966 } });
        assertEnvelope(answer, 200, Messages.bookUpdated);
        assert.deepEqual(answer.body.data, { ...book, year: 1966 });
        assert.deepEqual((await send("GET", `/book/${book.id}`)).body.data, {
          ...book,
          year: 1966,
        });
      });

      test("every field can be replaced at once", async () => {
        const book = await createBook();
        const changes = { title: "Children of Dune", author: "F. Herbert", year: 1976 };
        const answer = await send("PUT", `/book/${book.id}`, { body: changes });
        assert.deepEqual(answer.body.data, { id: book.id, ...changes });
      });

      test("{} is a valid update that changes nothing", async () => {
        const book = await createBook();
        const answer = await send("PUT", `/book/${book.id}`, { body: {} });
        assertEnvelope(answer, 200, Messages.bookUpdated);
        assert.deepEqual(answer.body.data, book);
      });

      test("404 Book not found for a missing book, before the body is examined", async () => {
        assertEnvelope(
          await send("PUT", "/book/9007199254740991", { body: { year: 1 } }),
          404,
          Messages.bookNotFound,
        );
        assertEnvelope(
          await send("PUT", "/book/9007199254740991", { payload: "not json" }),
          404,
          Messages.bookNotFound,
        );
        assertEnvelope(
          await send("PUT", "/book/abc", { payload: "[" }),
          404,
          Messages.bookNotFound,
        );
      });

      const invalidChanges: [string, string][] = [
        ["null title", `{"title":null}`],
        ["year as a string", `{"year":"1966"}`],
        ["empty author", `{"author":""}`],
        ["whitespace-only title", `{"title":"  "}`],
        ["title of 501 characters", JSON.stringify({ title: "t".repeat(501) })],
        ["year 10000", `{"year":10000}`],
        ["array body", "[]"],
        ["malformed JSON", "{"],
        ["empty body", ""],
        ["__proto__ key", `{"__proto__":{"year":1}}`],
      ];
      for (const [why, payload] of invalidChanges) {
        test(`400 Invalid input for an existing book: ${why}; the book is unchanged`, async () => {
          const book = await createBook();
          assertEnvelope(
            await send("PUT", `/book/${book.id}`, { payload }),
            400,
            Messages.invalidInput,
          );
          assert.deepEqual((await send("GET", `/book/${book.id}`)).body.data, book);
        });
      }

      test("an id in the body is ignored: the path names the book, no other row changes", async () => {
        const first = await createBook({ ...DUNE, title: "First" });
        const second = await createBook({ ...DUNE, title: "Second" });
        const answer = await send("PUT", `/book/${second.id}`, {
          body: { id: first.id, title: "Second, revised" },
        });
        assert.deepEqual(answer.body.data, { ...second, title: "Second, revised" });
        assert.deepEqual((await send("GET", `/book/${first.id}`)).body.data, first);
      });
    });

    describe("DELETE /book/{id}", () => {
      test("200 Book deleted successfully with data null; a GET then answers 404", async () => {
        const book = await createBook();
        const answer = await send("DELETE", `/book/${book.id}`);
        assertEnvelope(answer, 200, Messages.bookDeleted);
        assert.equal(answer.body.data, null);
        assertEnvelope(await send("GET", `/book/${book.id}`), 404, Messages.bookNotFound);
        assertEnvelope(
          await send("PUT", `/book/${book.id}`, { body: {} }),
          404,
          Messages.bookNotFound,
        );
      });

      test("404 Book not found for an id that does not exist, or was deleted already", async () => {
        const book = await createBook();
        await send("DELETE", `/book/${book.id}`);
        assertEnvelope(await send("DELETE", `/book/${book.id}`), 404, Messages.bookNotFound);
        assertEnvelope(await send("DELETE", "/book/9007199254740991"), 404, Messages.bookNotFound);
      });

      test("a non-canonical id deletes nothing (the original's DELETE /book/true emptied the table)", async () => {
        const book = await createBook();
        for (const id of ["true", "1 OR 1=1", "0", "-1", "*"]) {
          assertEnvelope(
            await send("DELETE", `/book/${encodeURIComponent(id)}`),
            404,
            Messages.bookNotFound,
          );
        }
        assert.deepEqual((await send("GET", `/book/${book.id}`)).body.data, book);
      });

      test("a deleted book's id is never given to a new book", async () => {
        const book = await createBook();
        await send("DELETE", `/book/${book.id}`);
        const next = await createBook();
        assert.ok(next.id > book.id);
      });
    });

    describe("the token comes before everything else on a book route", () => {
      const routes: [string, string][] = [
        ["POST", "/book"],
        ["GET", "/books"],
        ["GET", "/book/1"],
        ["PUT", "/book/1"],
        ["DELETE", "/book/1"],
      ];
      for (const [method, url] of routes) {
        test(`${method} ${url}: 401 without a token, and nothing is done`, async () => {
          const book = await createBook();
          const path = url.replace("/1", `/${book.id}`);
          const payload = JSON.stringify({ title: "Changed", author: "X", year: 1 });
          assertEnvelope(await call(app, method, path, { payload }), 401, Messages.tokenRequired);
          assertEnvelope(
            await call(app, method, path, { payload, token: "nonsense" }),
            401,
            Messages.invalidToken,
          );
          assert.deepEqual((await send("GET", `/book/${book.id}`)).body.data, book);
        });
      }

      test("no token plus a bad body or a bad id is 401, not 400 or 404", async () => {
        assertEnvelope(
          await call(app, "POST", "/book", { payload: "{" }),
          401,
          Messages.tokenRequired,
        );
        assertEnvelope(await call(app, "GET", "/book/abc"), 401, Messages.tokenRequired);
        assertEnvelope(
          await call(app, "PUT", "/book/abc", { payload: "[" }),
          401,
          Messages.tokenRequired,
        );
        assertEnvelope(await call(app, "DELETE", "/book/0"), 401, Messages.tokenRequired);
      });
    });

    describe("the envelope elsewhere", () => {
      test("/ready answers 200 while the store is reachable", async () => {
        assertEnvelope(await call(app, "GET", "/ready"), 200, Messages.ready);
      });

      test("a trailing slash is tolerated", async () => {
        const book = await createBook();
        assertEnvelope(await send("GET", "/books/"), 200, Messages.booksRetrieved);
        assertEnvelope(await send("GET", `/book/${book.id}/`), 200, Messages.bookRetrieved);
      });
    });
  });
}
