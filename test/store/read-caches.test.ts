// The listing-page cache stays within its budget whatever the queries, and the budget counts
// what the pages really cost.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createPageCache, PAGE_CACHE_BYTES, pageCost } from "../../src/store/read-caches.js";
import type { BookPage } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { storesUnderTest } from "../support/helpers.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The live heap after a full collection. */
function liveHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

// Before any describe: a suite declared after a top-level await would not run.
const kinds = await storesUnderTest();
const MB = 1024 * 1024;
const empty = (): BookPage => ({ json: "", count: 0, lastId: 0, lastKey: null });
const page = (json: string): BookPage => ({ json, count: 1, lastId: 1, lastKey: "k" });

describe("the page cache", () => {
  test("counts the key and the page of every entry, empty pages too", () => {
    const cache = createPageCache({ maxBytes: 1 * MB, maxEntries: 100 });
    cache.set('{"author":"a"}', empty());
    assert.equal(cache.bytes, pageCost('{"author":"a"}', empty()));
    assert.ok(cache.bytes > 2 * '{"author":"a"}'.length);
    cache.set("b", page("x".repeat(1000)));
    assert.ok(cache.bytes >= 2 * (1 + 1000 + 1) + 2 * 14);
    assert.equal(cache.size, 2);
  });

  test("forgets the oldest pages to stay within its bytes", () => {
    const cost = pageCost("k00", page("x".repeat(100)));
    const cache = createPageCache({ maxBytes: cost * 3, maxEntries: 100 });
    for (let i = 0; i < 5; i++) cache.set(`k0${i}`, page("x".repeat(100)));
    assert.equal(cache.size, 3);
    assert.ok(cache.bytes <= cost * 3);
    assert.equal(cache.get("k00"), undefined);
    assert.equal(cache.get("k01"), undefined);
    assert.equal(cache.get("k04")?.json.length, 100);
  });

  test("holds at most maxEntries pages", () => {
    const cache = createPageCache({ maxBytes: 100 * MB, maxEntries: 10 });
    for (let i = 0; i < 1000; i++) cache.set(`author=${i}`, empty());
    assert.equal(cache.size, 10);
    assert.ok(cache.get("author=999"));
  });

  test("a page larger than the whole budget is not kept, and takes nothing out", () => {
    const cache = createPageCache({ maxBytes: 10_000, maxEntries: 10 });
    cache.set("small", page("x"));
    cache.set("huge", page("x".repeat(10_000)));
    assert.equal(cache.get("huge"), undefined);
    assert.ok(cache.get("small"));
  });

  test("the same key again replaces the page and its cost", () => {
    const cache = createPageCache({ maxBytes: MB, maxEntries: 10 });
    cache.set("k", page("x".repeat(1000)));
    cache.set("k", page("x"));
    assert.equal(cache.size, 1);
    assert.equal(cache.bytes, pageCost("k", page("x")));
    cache.clear();
    assert.equal(cache.size, 0);
    assert.equal(cache.bytes, 0);
  });

  test("what it counts is at least what the heap holds", () => {
    const before = liveHeap();
    const cache = createPageCache({ maxBytes: 64 * MB, maxEntries: 1_000_000 });
    for (let i = 0; i < 50_000; i++) {
      cache.set(JSON.stringify({ after: 0, limit: 1, author: `author ${i}` }), {
        json: i % 2 ? "" : `{"id":${i},"title":"T ${i}","author":"author ${i}","year":1}`,
        count: i % 2 ? 0 : 1,
        lastId: i % 2 ? 0 : i,
        lastKey: null,
      });
    }
    const grown = liveHeap() - before;
    assert.ok(
      grown <= cache.bytes,
      `the heap grew ${(grown / MB).toFixed(1)} MB; the cache counted ${(cache.bytes / MB).toFixed(1)} MB`,
    );
    assert.equal(cache.size, 50_000);
  });
});

for (const kind of kinds) {
  describe(`${kind.name}: listing with many distinct queries`, { skip: kind.skip }, () => {
    // Each filter an author of about 260 characters (a number, then 250 x): kept without a bound,
    // the 40,000 pages would grow the heap by about 17 MB, twice the 8 MiB budget, as 100,000
    // short names did.
    test("40,000 distinct author filters leave the heap within its idle size and the cache's budget", async () => {
      const { store, dispose } = await kind.open();
      try {
        for (let i = 0; i < 20; i++) {
          await store.create({ title: `Title ${i}`, author: `Author ${i % 4}`, year: 1900 + i });
        }
        // Warm up: prepared statements, the driver's buffers.
        for (let i = 0; i < 1000; i++) await store.list({ after: 0, limit: 1, author: `w${i}` });
        const idle = liveHeap();
        let found = 0;
        const long = "x".repeat(250);
        for (let start = 0; start < 40_000; start += 100) {
          const pages = await Promise.all(
            Array.from({ length: 100 }, (_, i) =>
              store.list({ after: 0, limit: 1, author: `Someone ${start + i} ${long}` }),
            ),
          );
          for (const p of pages) found += p.count;
        }
        assert.equal(found, 0);
        const grown = liveHeap() - idle;
        assert.ok(
          grown < PAGE_CACHE_BYTES,
          `the heap grew ${(grown / MB).toFixed(1)} MB (budget ${PAGE_CACHE_BYTES / MB} MB)`,
        );
        // The cache still serves: a listing written afterwards is seen.
        assert.equal((await store.list({ after: 0, limit: 5, author: "Author 1" })).count, 5);
        await store.create({ title: "New", author: "Author 1", year: 2000 });
        assert.equal((await store.list({ after: 0, limit: 10, author: "Author 1" })).count, 6);
      } finally {
        await dispose();
      }
    });
  });
}
