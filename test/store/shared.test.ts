// One BookStore suite, run on every store: SQLite in memory and on a file, PostgreSQL, and
// PostgreSQL through pgbouncer. What one store alone does: sqlite.test.ts, postgres.test.ts.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { BookChanges, NewBook } from "../../src/rules/book.js";
import { searchTerms } from "../../src/rules/search.js";
import type { BookQuery, BookStore } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { type OpenedStore, storesUnderTest } from "../support/helpers.js";
import { asSent, booksOf, DUNE } from "./store-helpers.js";

const kinds = await storesUnderTest({ throughPgbouncer: true, sqliteFile: true });

for (const kind of kinds) {
  describe(`BookStore on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let store: BookStore;
    before(async () => {
      opened = await kind.open();
      store = opened.store;
    });
    after(() => opened?.dispose());
    // The books as a body carries them; when each changed is checked on its own below.
    const create = async (book: NewBook) => asSent(await store.create(book));
    const update = async (id: number, changes: BookChanges) =>
      asSent(await store.update(id, changes));
    const get = async (id: number) => asSent(await store.get(id));

    test("create returns the book with a positive integer id, as a JavaScript number", async () => {
      const book = await create(DUNE);
      assert.equal(typeof book.id, "number");
      assert.ok(Number.isSafeInteger(book.id) && book.id > 0);
      assert.deepEqual(book, { id: book.id, ...DUNE });
    });

    test("get returns what create stored, and undefined for an absent id", async () => {
      const book = await store.create(DUNE);
      assert.deepEqual(await store.get(book.id), book);
      assert.equal(typeof book.changedAt, "number");
      assert.equal(await get(Number.MAX_SAFE_INTEGER), undefined);
    });

    test("ids increase and a deleted id is never reused", async () => {
      const a = await create(DUNE);
      const b = await create(DUNE);
      assert.ok(b.id > a.id);
      assert.equal(await store.remove(b.id), true);
      const c = await create(DUNE);
      assert.ok(c.id > b.id);
    });

    test("update applies only the present fields and returns the stored record", async () => {
      const book = await create(DUNE);
      assert.deepEqual(await update(book.id, { year: 1966 }), { ...book, year: 1966 });
      assert.deepEqual(await update(book.id, { title: "Dune (rev.)" }), {
        ...book,
        title: "Dune (rev.)",
        year: 1966,
      });
      assert.deepEqual(await update(book.id, {}), {
        ...book,
        title: "Dune (rev.)",
        year: 1966,
      });
      assert.deepEqual(await get(book.id), { ...book, title: "Dune (rev.)", year: 1966 });
    });

    test("update and remove of an absent id report it and change nothing", async () => {
      const before = await store.list({ after: 0, limit: 10_000 });
      assert.equal(await update(Number.MAX_SAFE_INTEGER, { year: 1 }), undefined);
      assert.equal(await store.remove(Number.MAX_SAFE_INTEGER), false);
      assert.deepEqual(await store.list({ after: 0, limit: 10_000 }), before);
    });

    test("remove deletes exactly one book", async () => {
      const keep = await create(DUNE);
      const gone = await create(DUNE);
      assert.equal(await store.remove(gone.id), true);
      assert.equal(await get(gone.id), undefined);
      assert.deepEqual(await get(keep.id), keep);
      assert.equal(await store.remove(gone.id), false);
    });

    test("list pages in id order: after an id, at most limit books, as compact JSON", async () => {
      const created = [];
      for (let i = 0; i < 7; i++) created.push(await create({ ...DUNE, year: 2000 + i }));
      const first = created[0]?.id as number;
      const page = await store.list({ after: first, limit: 3 });
      assert.deepEqual(booksOf(page), created.slice(1, 4));
      assert.equal(page.count, 3);
      assert.equal(page.lastId, created[3]?.id);
      assert.equal(
        page.json,
        created
          .slice(1, 4)
          .map((b) => JSON.stringify(b))
          .join(","),
      );
      const all = booksOf(await store.list({ after: 0, limit: 100_000 }));
      const ids = all.map((b) => b.id);
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => x - y),
      );
      assert.deepEqual(await store.list({ after: created[6]?.id as number, limit: 10 }), {
        json: "",
        count: 0,
        lastId: 0,
        lastKey: null,
      });
    });

    test("list filters: words of the title or author, exact author, year, together", async () => {
      const tag = `f${Date.now().toString(36)}`;
      const books = [
        { title: `${tag} The Left Hand of Darkness`, author: "Ursula K. Le Guin", year: 1969 },
        { title: `${tag} The Dispossessed`, author: "Ursula K. Le Guin", year: 1974 },
        { title: `${tag} Kindred`, author: "Octavia E. Butler", year: 1979 },
        { title: `${tag} Les Misérables`, author: "Victor Hugo", year: 1862 },
        { title: `${tag} Преступление и наказание`, author: "Фёдор Достоевский", year: 1866 },
        { title: `${tag} Cien años de soledad`, author: "Gabriel García Márquez", year: 1967 },
        { title: `${tag} Ὀδύσσεια`, author: "Ὅμηρος", year: -700 },
        { title: `${tag} 三体`, author: "刘慈欣", year: 2008 },
        { title: `${tag} Die Straße; 100%_Pure "fun"`, author: "Anon", year: 1974 },
        // Gothic: letters outside the Basic Multilingual Plane, two UTF-16 units each.
        { title: `${tag} 𐌰𐌹𐍅𐌰𐌲𐌲𐌴𐌻𐌾𐍉`, author: "Wulfila", year: 360 },
      ];
      const created = [];
      for (const book of books) created.push(await create(book));
      const titles = async (query: Omit<BookQuery, "after" | "limit">, limit = 100) =>
        booksOf(await store.list({ after: 0, limit, ...query }))
          .filter((b) => b.title.startsWith(tag))
          .map((b) => b.title.slice(tag.length + 1));
      const search = (q: string) => ({ search: [...searchTerms(tag), ...searchTerms(q)] });
      assert.deepEqual(await titles(search("DARKNESS")), ["The Left Hand of Darkness"]);
      // Every word, in any order, each the start of a word of the title or the author.
      assert.deepEqual(await titles(search("guin le")), [
        "The Left Hand of Darkness",
        "The Dispossessed",
      ]);
      assert.deepEqual(await titles(search("tolk")), []);
      assert.deepEqual(await titles(search("disp ursula")), ["The Dispossessed"]);
      assert.deepEqual(await titles(search("hand butler")), []);
      // Inside a word is not the start of one.
      assert.deepEqual(await titles(search("ossessed")), []);
      // Case and accents aside, in every script.
      assert.deepEqual(await titles(search("miserables")), ["Les Misérables"]);
      assert.deepEqual(await titles(search("MISÉRABLES")), ["Les Misérables"]);
      assert.deepEqual(await titles(search("достоевский")), ["Преступление и наказание"]);
      assert.deepEqual(await titles(search("федор")), ["Преступление и наказание"]);
      assert.deepEqual(await titles(search("GARCIA marq")), ["Cien años de soledad"]);
      assert.deepEqual(await titles(search("οδυσσ")), ["Ὀδύσσεια"]);
      assert.deepEqual(await titles(search("ΌΜΗΡΟΣ")), ["Ὀδύσσεια"]);
      assert.deepEqual(await titles(search("三体")), ["三体"]);
      assert.deepEqual(await titles(search("刘慈欣")), ["三体"]);
      // A prefix is counted in characters, whatever their width.
      for (const prefix of ["𐌰𐌹", "𐌰𐌹𐍅", "𐌰𐌹𐍅𐌰", "𐌰𐌹𐍅𐌰𐌲𐌲", "𐌰𐌹𐍅𐌰𐌲𐌲𐌴"]) {
        assert.deepEqual(await titles(search(prefix)), ["𐌰𐌹𐍅𐌰𐌲𐌲𐌴𐌻𐌾𐍉"], prefix);
      }
      assert.deepEqual(await titles(search("strasse")), ['Die Straße; 100%_Pure "fun"']);
      // Punctuation separates words and is never syntax.
      assert.deepEqual(await titles(search('100%_pure "FUN"')), ['Die Straße; 100%_Pure "fun"']);
      // A one-character word matches a whole word only.
      assert.deepEqual(await titles(search("k")), [
        "The Left Hand of Darkness",
        "The Dispossessed",
      ]);
      assert.deepEqual(await titles(search("nowhere to be found")), []);
      assert.deepEqual(await titles({ author: "Octavia E. Butler" }), ["Kindred"]);
      assert.deepEqual(await titles({ author: "octavia e. butler" }), []);
      assert.deepEqual(await titles({ year: 1974 }), [
        "The Dispossessed",
        'Die Straße; 100%_Pure "fun"',
      ]);
      assert.deepEqual(await titles({ ...search("the"), year: 1974 }), ["The Dispossessed"]);
      assert.deepEqual(
        await titles({ author: "Ursula K. Le Guin", year: 1969, ...search("hand") }),
        ["The Left Hand of Darkness"],
      );
      // Sorted, either way, and by id backwards.
      assert.deepEqual(await titles({ ...search("the"), sort: "title" }), [
        "The Dispossessed",
        "The Left Hand of Darkness",
      ]);
      assert.deepEqual(await titles({ ...search("ursula"), sort: "id", descending: true }), [
        "The Dispossessed",
        "The Left Hand of Darkness",
      ]);
      // Pages of a search follow each other by id.
      const first = await store.list({ after: 0, limit: 1, ...search("") });
      assert.deepEqual(booksOf(first), [created[0]]);
      const second = await store.list({ after: first.lastId, limit: 2, ...search("") });
      assert.deepEqual(booksOf(second), created.slice(1, 3));
      // Changes reach the index.
      await update(created[2]?.id as number, { title: `${tag} Parable of the Sower` });
      assert.deepEqual(await titles(search("sower")), ["Parable of the Sower"]);
      assert.deepEqual(await titles(search("kindred")), []);
      assert.deepEqual(await titles(search("octavia")), ["Parable of the Sower"]);
      await update(created[2]?.id as number, { author: "O. E. Butler" });
      assert.deepEqual(await titles(search("octavia")), []);
      assert.deepEqual(await titles(search("sower butl")), ["Parable of the Sower"]);
      await update(created[2]?.id as number, { year: 1993 });
      assert.deepEqual(await titles(search("sower butl")), ["Parable of the Sower"]);
      // The year's filter and order follow the change (on PostgreSQL, its own table).
      assert.deepEqual(await titles({ year: 1993 }), ["Parable of the Sower"]);
      assert.deepEqual(await titles({ year: 1979 }), []);
      await store.remove(created[0]?.id as number);
      assert.deepEqual(await titles(search("darkness")), []);
      assert.deepEqual(await titles({ year: 1969 }), []);
      assert.deepEqual(await titles({ ...search(""), sort: "year", descending: true }, 3), [
        "三体",
        "Parable of the Sower",
        'Die Straße; 100%_Pure "fun"',
      ]);
    });

    test("count: the books the filters match, whatever the page; zero when none", async () => {
      const tag = `c${Date.now().toString(36)}`;
      for (const [title, year] of [
        ["Solaris", 1961],
        ["Fiasco", 1986],
        ["Eden", 1959],
      ] as const) {
        await create({ title: `${tag} ${title}`, author: `Lem ${tag}`, year });
      }
      assert.equal(await store.count({ search: searchTerms(tag) }), 3);
      assert.equal(await store.count({ author: `Lem ${tag}` }), 3);
      assert.equal(await store.count({ search: searchTerms(tag.toUpperCase()), year: 1986 }), 1);
      assert.equal(await store.count({ search: searchTerms(`${tag} nothing`) }), 0);
      assert.equal(await store.count({ search: searchTerms(`${tag} fias lem`) }), 1);
      const all = await store.count({});
      await create(DUNE);
      assert.equal(await store.count({}), all + 1);
    });

    test("text survives exactly: quotes, SQL, scripts, emoji, years at both bounds", async () => {
      for (const book of [
        { title: "Robert'); DROP TABLE books;--", author: 'O"Brien', year: -9999 },
        { title: "百年孤独 — 🦋 Ñ", author: "Gabriel García Márquez", year: 9999 },
        { title: "t".repeat(500), author: "a".repeat(300), year: 0 },
      ]) {
        const created = await create(book);
        assert.deepEqual(await get(created.id), created);
        assert.deepEqual(created, { id: created.id, ...book });
        assert.deepEqual(booksOf(await store.list({ after: created.id - 1, limit: 1 })), [created]);
      }
    });

    test("concurrent writes (one group commit) each get their own result and all persist", async () => {
      const keep = await create(DUNE);
      const gone = await create(DUNE);
      const [created, updated, removed, missing] = await Promise.all([
        Promise.all(Array.from({ length: 200 }, (_, i) => create({ ...DUNE, year: i }))),
        update(keep.id, { title: "Kept" }),
        store.remove(gone.id),
        update(Number.MAX_SAFE_INTEGER, { year: 1 }),
      ]);
      assert.equal(new Set(created.map((b) => b.id)).size, 200);
      for (const [i, book] of created.entries()) assert.equal(book.year, i);
      for (const book of created) assert.deepEqual(await get(book.id), book);
      assert.deepEqual(updated, { ...keep, title: "Kept" });
      assert.equal(removed, true);
      assert.equal(missing, undefined);
      assert.equal(await get(gone.id), undefined);
    });

    test("ping resolves while the store is reachable", async () => {
      await store.ping();
    });
  });
}
