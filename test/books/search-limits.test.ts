// GET /books?q= at the edges of what a search may ask: titles and words of any length within
// the rules, on every store, with no search in the logs; one time limit for a request.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import type { Book } from "../../src/rules/book.js";
import { openPostgresStore } from "../../src/store/postgres/store.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import type { BookFilters, BookStore } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  call,
  captureLogs,
  freshPostgresDatabase,
  freshPostgresSchema,
  type OpenedStore,
  storesUnderTest,
  tokenFor,
} from "../support/helpers.js";
import { LONG_WORD_TITLES } from "../support/long-words.js";
import { pgConnect } from "../support/pg.js";
import { pgbouncerSkipReason, startPgbouncer } from "../support/pgbouncer.js";

const kinds = await storesUnderTest();
const postgres = kinds.find((k) => k.name === "postgres");

for (const kind of kinds) {
  describe(`long words through GET /books on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let app: App;
    let token: string;
    const logs = captureLogs();
    before(async () => {
      opened = await kind.open();
      app = await buildTestApp({
        store: opened.store,
        logStream: logs.stream,
        env: { LOG_LEVEL: "info" },
      });
      token = await tokenFor(app);
    });
    after(async () => {
      await app?.close();
      await opened?.dispose();
    });

    test("titles of long words are created (201) and found (200), and no search is logged", async () => {
      const ids = new Map<number, string>();
      for (const [name, title] of Object.entries(LONG_WORD_TITLES)) {
        const body = { title, author: "Anon", year: 2000 };
        const created = await call<Book>(app, "POST", "/book", { token, body });
        assert.equal(created.status, 201, `${name}: ${created.raw.slice(0, 200)}`);
        ids.set((created.body.data as Book).id, name);
      }
      const found = async (q: string) => {
        const answer = await call<Book[]>(app, "GET", `/books?q=${encodeURIComponent(q)}`, {
          token,
          headers: { prefer: "count=exact" },
        });
        assert.equal(answer.status, 200, answer.raw.slice(0, 200));
        const names = (answer.body.data as Book[]).map((book) => ids.get(book.id));
        assert.equal(answer.headers["x-total-count"], String(names.length));
        return names;
      };
      // The same hits on every store.
      assert.deepEqual(await found("\u3315".repeat(200)), ["squared", "mixed"]);
      assert.deepEqual(await found(`x${"\u3315".repeat(199)}`), ["mixed"]);
      assert.deepEqual(await found("\ufdf2".repeat(200)), ["ligature"]);
      assert.deepEqual(await found(LONG_WORD_TITLES.hangul.slice(0, 200)), ["hangul"]);
      assert.deepEqual(await found(LONG_WORD_TITLES.voiced.slice(0, 200)), ["voiced"]);
      // Neither the searches nor the titles, folded or not, reached a log line.
      for (const text of ["\u3315\u3315", "キログラム", "\ufdf2\ufdf2", "اللهالله"]) {
        assert.ok(!logs.text().includes(text), `${text} reached the logs`);
      }
    });
  });
}

describe("one time limit for the reads of a request", () => {
  test("the count, the page and the look for a next page share when the search began", async () => {
    const store = openSqliteStore(":memory:");
    const began: (number | undefined)[] = [];
    const noted = <T extends BookFilters>(filters: T) => {
      began.push(filters.searchStarted);
      return filters;
    };
    // The store itself, each read noted on its way.
    const watched: BookStore = {
      ...store,
      list: (query) => store.list(noted(query)),
      count: (filters) => store.count(noted(filters)),
    };
    const app = await buildTestApp({ store: watched });
    const token = await tokenFor(app);
    for (const title of ["Solaris", "Solaris II", "Solaris III"]) {
      await call(app, "POST", "/book", { token, body: { title, author: "Lem", year: 1961 } });
    }
    const answer = await call(app, "GET", "/books?q=solaris&limit=2", {
      token,
      headers: { prefer: "count=exact" },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.message, Messages.booksRetrieved);
    // The count, the page, and the one book after it: three reads, one start.
    assert.equal(began.length, 3);
    assert.equal(typeof began[0], "number");
    assert.deepEqual(new Set(began).size, 1);
    await app.close();
    await store.close();
  });
});

describe("a search while the store is slow", { skip: postgres?.skip ?? "no PostgreSQL" }, () => {
  test("held by a lock elsewhere: 503 with Retry-After, not 400; on the idle store: 200", async () => {
    const schema = await freshPostgresSchema();
    const store = await openPostgresStore(schema.dbUrl, {
      poolSize: 4,
      timeoutMs: 5_000,
      preparedStatements: true,
      description: "test",
      searchTimeoutMs: 1_000,
    });
    const app = await buildTestApp({ store });
    const db = await pgConnect(schema.dbUrl);
    try {
      const token = await tokenFor(app);
      const body = { title: "Solaris", author: "Stanisław Lem", year: 1961 };
      assert.equal((await call(app, "POST", "/book", { token, body })).status, 201);
      const search = (prefer?: string) =>
        call<Book[]>(app, "GET", "/books?q=solaris&limit=5", {
          token,
          headers: prefer === undefined ? {} : { prefer },
        });
      await db.script("BEGIN; LOCK TABLE books IN ACCESS EXCLUSIVE MODE");
      for (const answer of [await search(), await search("count=exact")]) {
        assert.equal(answer.status, 503, answer.raw);
        assert.equal(answer.body.message, Messages.serviceUnavailable);
        assert.ok(Number(answer.headers["retry-after"]) > 0, "no Retry-After");
      }
      await db.script("ROLLBACK");
      for (const answer of [await search(), await search("count=exact")]) {
        assert.equal(answer.status, 200, answer.raw);
        assert.equal(answer.body.data?.length, 1);
      }
    } finally {
      await db.script("ROLLBACK").catch(() => {});
      await db.end();
      await app.close();
      await store.close();
      await schema.drop();
    }
  });
});

describe("a search while the store is away for a moment", {
  skip: postgres?.skip || pgbouncerSkipReason(),
}, () => {
  test("the wait for the store spends none of the search's limit: 200, not 400", async () => {
    const pgbouncer = await startPgbouncer({ poolMode: "transaction" });
    const database = await freshPostgresDatabase();
    const store = await openPostgresStore(pgbouncer.url(database.name), {
      poolSize: 4,
      timeoutMs: 5_000,
      preparedStatements: false,
      description: "test",
      searchTimeoutMs: 500,
    });
    const app = await buildTestApp({ store });
    try {
      const token = await tokenFor(app);
      const body = { title: "Solaris", author: "Stanisław Lem", year: 1961 };
      assert.equal((await call(app, "POST", "/book", { token, body })).status, 201);
      // The pooler holds every query, as while PostgreSQL restarts, for longer than the
      // search's limit and shorter than DB_TIMEOUT_SECONDS.
      await pgbouncer.pause(database.name);
      const answer = call<Book[]>(app, "GET", "/books?q=solaris&limit=5", {
        token,
        headers: { prefer: "count=exact" },
      });
      await new Promise((done) => setTimeout(done, 1_200));
      await pgbouncer.resume(database.name);
      const answered = await answer;
      assert.equal(answered.status, 200, answered.raw);
      assert.equal(answered.body.data?.length, 1);
    } finally {
      await app.close();
      await store.close();
      await pgbouncer.stop();
      await database.drop();
    }
  });
});
