// The change log on every store: SQLite in memory and on a file (the writer's thread), and
// PostgreSQL. One entry per change, in the change's transaction; restore; trimming.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { changeFeed } from "../../src/changes/feed.js";
import type { Book } from "../../src/rules/book.js";
import {
  BookExistsError,
  type Change,
  type ChangeLog,
  ChangesGoneError,
} from "../../src/store/changes.js";
import { openBackupStore } from "../../src/store/open.js";
import { BookChangedError, type BookStore } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { type OpenedStore, storesUnderTest } from "../support/helpers.js";
import { asSent, DUNE } from "./store-helpers.js";

const ANA = { name: "ana", account: 7 };
const PAIR = { name: "admin", account: null };

const kinds = await storesUnderTest({ sqliteFile: true });
/** A catalogue in memory cannot be reached by a second connection, as a restore is. */
const inMemory = (name: string) => name === "sqlite";

/** Every entry after `since`, a page of `limit` at a time. */
async function allAfter(log: ChangeLog, since: number, limit = 3): Promise<Change[]> {
  const all: Change[] = [];
  for (;;) {
    const page = await log.list(since, limit);
    all.push(...page);
    if (page.length < limit) return all;
    since = page[page.length - 1]?.seq as number;
  }
}

/** The catalogue the log describes, replayed from its first entry. */
function replay(changes: Change[]): Map<number, Book> {
  const books = new Map<number, Book>();
  for (const change of changes) {
    if (change.book === null) books.delete(change.id);
    else books.set(change.id, change.book);
  }
  return books;
}

for (const kind of kinds) {
  describe(`the change log on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let store: BookStore;
    let log: ChangeLog;
    before(async () => {
      opened = await kind.open();
      store = opened.store;
      log = store.changes as ChangeLog;
    });
    after(() => opened?.dispose());

    test("each create, update and delete appends one entry: what, who, when, before and after", async () => {
      const since = await log.latest();
      const started = Date.now();
      const stored = await store.create(DUNE, ANA);
      const changed = await store.update(stored.id, { year: 1966 }, undefined, PAIR);
      const [created, updated] = [asSent(stored), asSent(changed) as Book];
      assert.equal(await store.remove(created.id, undefined, ANA), true);
      const entries = await log.list(since, 10);
      // A book answered by a write says when it changed: its entry's time.
      assert.deepEqual(
        [stored.changedAt, changed?.changedAt],
        entries.slice(0, 2).map((e) => e.at),
      );
      assert.deepEqual(
        entries.map(({ op, id, book, before, by }) => ({ op, id, book, before, by })),
        [
          { op: "create", id: created.id, book: created, before: null, by: ANA },
          { op: "update", id: created.id, book: updated, before: created, by: PAIR },
          { op: "delete", id: created.id, book: null, before: updated, by: ANA },
        ],
      );
      const seqs = entries.map((e) => e.seq);
      assert.ok(
        (seqs[0] as number) > since && seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as number)),
      );
      for (const entry of entries)
        assert.ok(entry.at >= started - 1000 && entry.at <= Date.now() + 1000);
      assert.equal(await log.latest(), seqs[2]);
    });

    test("a write that changes nothing logs nothing: absent, refused, or an empty update", async () => {
      const book = await store.create(DUNE);
      const since = await log.latest();
      assert.equal(await store.update(book.id + 1_000_000, { year: 1 }), undefined);
      assert.equal(await store.remove(book.id + 1_000_000), false);
      await assert.rejects(store.update(book.id, { year: 2 }, ['"other"']), BookChangedError);
      await assert.rejects(store.remove(book.id, ['"other"']), BookChangedError);
      assert.deepEqual(await store.update(book.id, {}), book);
      assert.deepEqual(await log.list(since, 10), []);
      assert.equal(await log.latest(), since);
    });

    test("entries come after `since`, a page at a time, and one book's history alone", async () => {
      const since = await log.latest();
      const a = await store.create({ ...DUNE, title: "A" });
      const b = await store.create({ ...DUNE, title: "B" });
      for (let year = 1; year <= 4; year++) {
        await store.update(a.id, { year });
        await store.update(b.id, { year });
      }
      await store.remove(a.id);
      const all = await allAfter(log, since, 3);
      assert.equal(all.length, 11);
      assert.deepEqual(await log.list(since, 100), all);
      const history = await log.history(a.id, 0, 100);
      assert.deepEqual(
        history.map((e) => e.op),
        ["create", "update", "update", "update", "update", "delete"],
      );
      assert.deepEqual(
        history,
        all.filter((e) => e.id === a.id),
      );
      assert.deepEqual(await log.history(a.id, history[3]?.seq as number, 2), history.slice(4, 6));
      assert.deepEqual(await log.history(b.id + 1_000_000, 0, 10), []);
    });

    test("restore brings a deleted book back with its id and last values, and logs it", async () => {
      const book = await store.create(DUNE);
      const updated = asSent(await store.update(book.id, { title: "Dune Messiah" })) as Book;
      await store.remove(book.id);
      const since = await log.latest();
      const restored = await store.restore(book.id, ANA);
      assert.deepEqual(asSent(restored), updated);
      assert.deepEqual(await store.get(book.id), restored);
      const [entry] = await log.list(since, 10);
      assert.deepEqual(
        { op: entry?.op, id: entry?.id, book: entry?.book, before: entry?.before, by: entry?.by },
        { op: "restore", id: book.id, book: updated, before: null, by: ANA },
      );
      // It is a book like any other: it changes, is found, is deleted again.
      assert.deepEqual(asSent(await store.update(book.id, { year: 1969 })), {
        ...updated,
        year: 1969,
      });
      await assert.rejects(store.restore(book.id), BookExistsError);
      assert.equal(await store.remove(book.id), true);
      assert.deepEqual(asSent(await store.restore(book.id)), { ...updated, year: 1969 });
      // Ids keep growing past a restored one.
      assert.ok((await store.create(DUNE)).id > book.id);
    });

    test("restore of an id never seen is undefined; of a book that exists, BookExistsError", async () => {
      const book = await store.create(DUNE);
      await assert.rejects(store.restore(book.id), BookExistsError);
      assert.equal(await store.restore(book.id + 1_000_000), undefined);
    });

    test("many writes at once: every one logged once, in order, and the log replays to the catalogue", async () => {
      await log.trim({ days: 30, entries: 0 });
      const trimmed = await log.latest();
      const existing = new Map<number, Book>();
      for (const book of await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.create({ ...DUNE, year: i })),
      )) {
        existing.set(book.id, asSent(book));
      }
      const ids = [...existing.keys()];
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 300; i++) {
        const id = ids[i % ids.length] as number;
        if (i % 10 === 3) writes.push(store.remove(id));
        else if (i % 10 === 7) writes.push(store.restore(id).catch(() => undefined));
        else if (i % 5 === 0) writes.push(store.create({ ...DUNE, year: i }));
        else writes.push(store.update(id, { year: i }));
      }
      await Promise.all(writes);
      const entries = await allAfter(log, trimmed, 97);
      const replayed = replay(entries);
      for (const id of ids) {
        // Books created before the trim are in the log only from their first change after it.
        if (!entries.some((e) => e.id === id)) replayed.set(id, existing.get(id) as Book);
      }
      for (const [id, book] of replayed) assert.deepEqual(asSent(await store.get(id)), book);
      for (const id of ids) {
        if (!replayed.has(id)) assert.equal(await store.get(id), undefined);
      }
      assert.equal(new Set(entries.map((e) => e.seq)).size, entries.length);
    });

    test("a deleted book's history and restore hold after many other writes, a page at a time", async () => {
      const since = await log.latest();
      const book = await store.create({ ...DUNE, title: "Chained" });
      const others = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.create({ ...DUNE, year: i })),
      );
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 200; i++) {
        writes.push(store.update((others[i % others.length] as Book).id, { year: 2000 + i }));
        if (i % 20 === 0) writes.push(store.update(book.id, { year: i }));
      }
      await Promise.all(writes);
      const last = asSent(await store.get(book.id)) as Book;
      assert.equal(await store.remove(book.id, undefined, ANA), true);
      // Other books change, go and come after the delete.
      for (let round = 0; round < 5; round++) {
        await Promise.all([
          ...others.map((other, i) => store.update(other.id, { year: round * 100 + i })),
          store.create({ ...DUNE, year: round }),
          store.remove((others[round] as Book).id),
        ]);
      }
      const all = await allAfter(log, since, 50);
      const mine = all.filter((e) => e.id === book.id);
      assert.deepEqual(
        mine.map((e) => e.op),
        ["create", ...Array.from({ length: 10 }, () => "update"), "delete"],
      );
      assert.deepEqual(await log.history(book.id, 0, 1000), mine);
      // A page at a time, from `since` to `since`.
      const paged: Change[] = [];
      for (let after = 0; ; ) {
        const page = await log.history(book.id, after, 4);
        paged.push(...page);
        if (page.length < 4) break;
        after = page[page.length - 1]?.seq as number;
      }
      assert.deepEqual(paged, mine);
      // A `since` that is no entry of the book's: what comes after it.
      const fifth = mine[4]?.seq as number;
      assert.deepEqual(await log.history(book.id, fifth - 1, 2), mine.slice(4, 6));
      assert.deepEqual(await log.history(book.id, mine[11]?.seq as number, 10), []);
      // Every other book's history, deleted or not, is its own entries.
      for (const other of others) {
        assert.deepEqual(
          await log.history(other.id, since, 1000),
          all.filter((e) => e.id === other.id),
        );
      }
      assert.deepEqual(asSent(await store.restore(book.id, PAIR)), last);
      const history = await log.history(book.id, 0, 1000);
      assert.deepEqual(history.slice(0, -1), mine);
      assert.deepEqual(
        { op: history.at(-1)?.op, book: history.at(-1)?.book, by: history.at(-1)?.by },
        { op: "restore", book: last, by: PAIR },
      );
      // Restored, it is deleted and restored again, its chain unbroken.
      assert.deepEqual(asSent(await store.update(book.id, { year: 1 })), { ...last, year: 1 });
      assert.equal(await store.remove(book.id), true);
      assert.deepEqual(asSent(await store.restore(book.id)), { ...last, year: 1 });
      assert.deepEqual(
        (await log.history(book.id, mine[11]?.seq as number, 10)).map((e) => e.op),
        ["restore", "update", "delete", "restore"],
      );
    });

    test("a history stops at the entries trimmed; a deleted book trimmed cannot be restored", async () => {
      const book = await store.create(DUNE);
      await store.update(book.id, { year: 1 });
      const kept = asSent(await store.update(book.id, { year: 2 })) as Book;
      await log.trim({ days: 30, entries: 1 });
      assert.deepEqual(
        (await log.history(book.id, 0, 10)).map((e) => [e.op, e.book]),
        [["update", kept]],
      );
      assert.equal(await store.remove(book.id), true);
      assert.deepEqual(
        (await log.history(book.id, 0, 10)).map((e) => e.op),
        ["update", "delete"],
      );
      await log.trim({ days: 30, entries: 0 });
      assert.deepEqual(await log.history(book.id, 0, 10), []);
      assert.equal(await store.restore(book.id), undefined);
      assert.equal(await store.get(book.id), undefined);
    });

    test("a restore of a backup starts the log again: every earlier sequence is gone", {
      skip: inMemory(kind.name),
    }, async () => {
      const book = await store.create(DUNE);
      const before = await log.latest();
      // A live follower that has read everything: the restore ends it (it reconnects, is 410).
      const feed = changeFeed(log, 60_000);
      let dropped = false;
      const follower = {
        ready: async () => true,
        catchUp: () => {},
        take: () => true,
        dropped: () => {
          dropped = true;
        },
      };
      const following = await feed.follow(before, follower);
      const db = kind.name.startsWith("sqlite")
        ? ({ kind: "sqlite", path: opened.dbUrl.replace(/^sqlite:/, "") } as const)
        : ({ kind: "postgres", url: opened.dbUrl } as const);
      const backup = await openBackupStore(db, "restore");
      try {
        const pages = (async function* () {
          yield [{ ...book, title: "Restored" }];
        })();
        await backup.restore(pages, book.id + 1, true);
      } finally {
        await backup.close();
      }
      feed.wake();
      for (let i = 0; i < 50 && !dropped; i++) await new Promise((ok) => setTimeout(ok, 100));
      following.stop();
      feed.close();
      assert.equal(dropped, true, "the live follower was dropped");
      // The newest sequence too: a client that had read every entry must read the catalogue.
      for (const since of [0, before]) {
        const gone = await log.list(since, 10).catch((error) => error);
        assert.ok(gone instanceof ChangesGoneError, `since=${since}`);
        assert.ok(gone.oldest > before + 1, `the oldest kept, ${gone.oldest}`);
      }
      const restarted = await log.latest();
      assert.ok(restarted > before);
      assert.deepEqual(await log.list(restarted, 10), []);
      await store.update(book.id, { year: 2000 });
      const [next] = await log.list(restarted, 10);
      assert.equal(next?.seq, restarted + 1);
      assert.equal(next?.book?.title, "Restored");
    });

    test("trimming keeps the newest entries; a `since` below them is ChangesGoneError", async () => {
      for (let i = 0; i < 5; i++) await store.create({ ...DUNE, year: i });
      const newest = await log.latest();
      assert.ok((await log.trim({ days: 30, entries: 2 })) > 0);
      const kept = await log.list(0, 10).catch((error) => error);
      assert.ok(kept instanceof ChangesGoneError);
      assert.equal(kept.oldest, newest - 1);
      assert.equal((await log.list(newest - 2, 10)).length, 2);
      await assert.rejects(log.list(newest - 3, 10), ChangesGoneError);
      assert.equal(await log.trim({ days: 30, entries: 2 }), 0);
      // Entries older than the days kept go, whatever their number.
      assert.equal(await log.trim({ days: -1, entries: 1000 }), 2);
      assert.deepEqual(await log.list(newest, 10), []);
      await assert.rejects(log.list(newest - 1, 10), ChangesGoneError);
      assert.equal(await log.latest(), newest);
      // What comes next is numbered above.
      await store.create(DUNE);
      assert.equal((await log.list(newest, 10))[0]?.seq, newest + 1);
    });
  });
}
