// One order and one search in every script, the same on both stores (decisions.md, "Order
// and search in every script").
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Book } from "../../src/rules/book.js";
import { searchTerms } from "../../src/rules/search.js";
import type { BookPage, BookQuery } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { type OpenedStore, storesUnderTest } from "../support/helpers.js";

const booksOf = (page: BookPage): Book[] => JSON.parse(`[${page.json}]`);

// Titles in 12 scripts, with accents, full-width letters and ß, in the order they must sort:
// case and accents aside (Å with A, é with e, ß as ss, Ａ as A), scripts in Unicode order,
// equal keys by id (the two Strasse are created in this order).
const IN_ORDER = [
  "ＡＢＣ",
  "Ångström",
  "apple",
  "Åsa-Nisse",
  "Bear",
  "éclair",
  "Eden",
  "Straße",
  "STRASSE",
  "Zen",
  "Άλφα",
  "Ωmega",
  "Анна",
  "Ярослав",
  "Արամ",
  "שלום",
  "كتاب",
  "किताब",
  "หนังสือ",
  "ვეფხისტყაოსანი",
  "ひらがな",
  "カタカナ",
  "海辺のカフカ",
  "한강",
];

// Books written without spaces (of 2001, apart from the titles above), and the terms that
// must find them anywhere inside.
const UNSPACED = [
  { title: "海辺のカフカ", author: "村上春樹" },
  { title: "ノルウェイの森", author: "村上春樹" },
  { title: "三体", author: "刘慈欣" },
  { title: "채식주의자", author: "한강" },
  { title: "ความสุขของกะทิ", author: "งามพรรณ เวชชาชีวะ" },
  { title: "吾輩は猫である名前はまだ無いどこで生れたかとんと見当がつかぬ", author: "夏目漱石" },
  { title: "Kafka on the Shore", author: "Haruki Murakami" },
];
const FOUND: [string, string[]][] = [
  ["森", ["ノルウェイの森"]],
  // One character from inside a run: a word of its own in SQLite's index (version 15).
  ["の", ["海辺のカフカ", "ノルウェイの森"]],
  ["식", ["채식주의자"]],
  ["ﾉ", ["ノルウェイの森"]],
  ["春樹", ["海辺のカフカ", "ノルウェイの森"]],
  ["カフカ", ["海辺のカフカ"]],
  ["のカ", ["海辺のカフカ"]],
  ["慈欣", ["三体"]],
  ["주의", ["채식주의자"]],
  ["강", ["채식주의자"]],
  ["สุข", ["ความสุขของกะทิ"]],
  ["ชาชี", ["ความสุขของกะทิ"]],
  ["森林", []],
  ["カフカ 春樹", ["海辺のカフカ"]],
  // Longer than the suffixes the index keeps (16 characters), from inside the title.
  [
    "猫である名前はまだ無いどこで生れたかとんと",
    ["吾輩は猫である名前はまだ無いどこで生れたかとんと見当がつかぬ"],
  ],
  ["猫である名前はまだ無いどこで生れたかとんとX", []],
  // Other scripts keep matching the start of words.
  ["kaf", ["Kafka on the Shore"]],
  ["afka", []],
];

for (const kind of await storesUnderTest()) {
  describe(`every script on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    before(async () => {
      opened = await kind.open();
      // Created in a shuffled order, but the two Strasse in theirs.
      const shuffled = [...IN_ORDER.entries()].sort(([a], [b]) => ((a * 7) % 24) - ((b * 7) % 24));
      for (const [, title] of shuffled.filter(([, t]) => !/^stra/i.test(t))) {
        await opened.store.create({ title, author: "Anon", year: 2000 });
      }
      for (const title of ["Straße", "STRASSE"]) {
        await opened.store.create({ title, author: "Anon", year: 2000 });
      }
      for (const book of UNSPACED) await opened.store.create({ ...book, year: 2001 });
    });
    after(() => opened?.dispose());

    const walk = async (descending: boolean, limit: number) => {
      const titles: string[] = [];
      let query: BookQuery = { after: 0, limit, sort: "title", descending, year: 2000 };
      for (;;) {
        const page = await opened.store.list(query);
        titles.push(...booksOf(page).map((book) => book.title));
        if (page.count < limit) return titles;
        query = { ...query, after: page.lastId, afterKey: page.lastKey ?? undefined };
      }
    };

    test("titles sort case- and accent-blind, scripts in Unicode order, ties by id", async () => {
      assert.deepEqual(await walk(false, 100), IN_ORDER);
      assert.deepEqual(await walk(true, 100), [...IN_ORDER].reverse());
    });

    test("keyset paging walks the same order both ways, a few books a page", async () => {
      for (const limit of [1, 3, 5]) {
        assert.deepEqual(await walk(false, limit), IN_ORDER, `ascending, limit ${limit}`);
        assert.deepEqual(await walk(true, limit), [...IN_ORDER].reverse(), `descending, ${limit}`);
      }
    });

    test("the author filter is exact, whatever the sort key shares", async () => {
      await opened.store.create({ title: "Other", author: "ANON", year: 2000 });
      const page = await opened.store.list({ after: 0, limit: 100, author: "Anon" });
      assert.equal(page.count, IN_ORDER.length);
      assert.equal(await opened.store.count({ author: "ANON" }), 1);
    });

    for (const [q, titles] of FOUND) {
      test(`q=${q} finds ${titles.length === 0 ? "nothing" : titles.join(", ")}`, async () => {
        const search = searchTerms(q);
        for (const sort of ["id", "title"] as const) {
          const page = await opened.store.list({ after: 0, limit: 100, search, sort, year: 2001 });
          const found = booksOf(page).map((book) => book.title);
          assert.deepEqual(found.sort(), [...titles].sort(), `sorted by ${sort}`);
        }
        assert.equal(await opened.store.count({ search, year: 2001 }), titles.length);
      });
    }
  });
}
