// Listings of any size give the event loop back between their pages: fifty clients listing
// 100,000 books at once, by GET and by HEAD, with and without a search, never hold it for
// 100 ms, and /health answers meanwhile, on either store. The service runs in this process,
// over a real socket, so the clients' own work shares its loop (which can only make it worse).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { numberedBooks, seedBooks } from "../../bench/catalogue.js";
import type { App } from "../../src/http/app.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import type { BookStore } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  listenLocally,
  type StoreUnderTest,
  storesUnderTest,
  tokenFor,
} from "../support/helpers.js";
import { assertLoopNeverHeld, type LoopRecord, startLoopRecord } from "../support/loop-delay.js";

const CATALOGUE_SIZE = 100_000;
// PostgreSQL reads every page through its pool of two connections, several times slower
// than SQLite: fewer clients there keep the test short.
const CLIENTS = { sqlite: 50, postgres: 10 };
// Every title is "Title number …": this search matches every book.
const SEARCH = "/books?q=ti";

interface Received {
  status: number;
  bytes: number;
  headers: Record<string, string | string[] | undefined>;
}

/** One request over its own connection; the body is counted, not kept (nor parsed). */
function fetchCounting(base: string, method: string, path: string, token: string) {
  return new Promise<Received>((resolve, reject) => {
    const outgoing = request(`${base}${path}`, {
      method,
      headers: { authorization: token },
      agent: false,
    });
    outgoing.on("error", reject);
    outgoing.on("response", (incoming) => {
      let bytes = 0;
      incoming.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      incoming.on("error", reject);
      incoming.on("end", () =>
        resolve({ status: incoming.statusCode ?? 0, bytes, headers: incoming.headers }),
      );
    });
    outgoing.setTimeout(60_000, () => outgoing.destroy(new Error(`${path}: no answer in 60 s`)));
    outgoing.end();
  });
}

interface Catalogue {
  store: BookStore;
  dispose(): Promise<void>;
}

/** A store of CATALOGUE_SIZE numbered books: SQLite in a file, as served, or PostgreSQL. */
async function openCatalogue(kind: StoreUnderTest): Promise<Catalogue> {
  if (kind.name !== "sqlite") {
    const opened = await kind.open();
    await seedBooks({ kind: "postgres", url: opened.dbUrl }, numberedBooks(CATALOGUE_SIZE));
    return opened;
  }
  const dir = mkdtempSync(join(tmpdir(), "books-listing-loop-"));
  const path = join(dir, "books.db");
  await openSqliteStore(path).close();
  await seedBooks({ kind: "sqlite", path }, numberedBooks(CATALOGUE_SIZE));
  const store = openSqliteStore(path);
  return {
    store,
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

for (const kind of await storesUnderTest()) {
  const clients = kind.name === "sqlite" ? CLIENTS.sqlite : CLIENTS.postgres;
  const title = `${clients} clients listing ${CATALOGUE_SIZE.toLocaleString("en")} books at once`;
  describe(`${title} on ${kind.name}`, { skip: kind.skip }, () => {
    let catalogue: Catalogue;
    let app: App;
    let base: string;
    let token: string;
    const wholeBytes = new Map<string, number>();

    before(async () => {
      catalogue = await openCatalogue(kind);
      app = await buildTestApp({ store: catalogue.store });
      token = await tokenFor(app);
      base = await listenLocally(app);
      // Each listing once, alone, before recording: every book, once, in order.
      for (const path of ["/books", SEARCH]) {
        const answer = await app.inject({ url: path, headers: { authorization: token } });
        const ids = (JSON.parse(answer.body) as { data: { id: number }[] }).data.map((b) => b.id);
        assert.deepEqual(
          ids,
          Array.from({ length: CATALOGUE_SIZE }, (_, i) => i + 1),
        );
        wholeBytes.set(path, answer.rawPayload.length);
      }
    });
    after(async () => {
      await app?.close();
      await catalogue?.dispose();
    });

    /** Runs the requests at once while /health is asked every 20 ms; the loop must never be held. */
    async function atOnce(t: test.TestContext, requests: [method: string, path: string][]) {
      const records: LoopRecord[] = [];
      const stop = startLoopRecord(t.name, records);
      // The recorder's first tick only marks its start.
      await sleep(20);
      let listing = true;
      let slowestHealthMs = 0;
      const probing = (async () => {
        while (listing) {
          const started = performance.now();
          const health = await fetchCounting(base, "GET", "/health", token);
          assert.equal(health.status, 200);
          slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
          await sleep(20);
        }
      })();
      const started = performance.now();
      const answers = await Promise.all(
        requests.map(([method, path]) => fetchCounting(base, method, path, token)),
      ).finally(() => {
        listing = false;
      });
      const tookMs = performance.now() - started;
      await probing;
      stop();
      t.diagnostic(
        `${requests.length} listings in ${tookMs.toFixed(0)} ms; slowest /health ${slowestHealthMs.toFixed(1)} ms`,
      );
      assertLoopNeverHeld(t, records[0] as LoopRecord);
      return answers;
    }

    test("GET /books: every listing whole, and the loop never held", async (t) => {
      const answers = await atOnce(
        t,
        Array.from({ length: clients }, () => ["GET", "/books"]),
      );
      for (const answer of answers) {
        assert.equal(answer.status, 200);
        assert.equal(answer.bytes, wholeBytes.get("/books"));
      }
    });

    test("GET and HEAD of a search matching every book, and HEAD /books: the loop never held", async (t) => {
      const requests: [string, string][] = Array.from({ length: clients }, (_, i) => {
        const kinds: [string, string][] = [
          ["GET", SEARCH],
          ["HEAD", SEARCH],
          ["HEAD", "/books"],
        ];
        return kinds[i % kinds.length] as [string, string];
      });
      const answers = await atOnce(t, requests);
      answers.forEach((answer, i) => {
        const [method, path] = requests[i] as [string, string];
        assert.equal(answer.status, 200, `${method} ${path}`);
        assert.equal(answer.bytes, method === "HEAD" ? 0 : wholeBytes.get(path));
        assert.match(String(answer.headers["content-type"]), /^application\/json/);
      });
    });
  });
}
