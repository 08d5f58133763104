// The embedded store on the Node running the suite: statements the garbage collector takes,
// at start-up, under load and at shutdown, never abort the process (better-sqlite3 before 13
// did on Node 24.19 and later, exit 134, whenever a statement was collected).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { hasWrk } from "../../bench/load.js";
import type { Book } from "../../src/rules/book.js";
import { describe } from "../support/describe.js";
import { login, request, startService } from "../support/service.js";

const CREDENTIALS = { username: "librarian", password: "gc-password-5d1e" };
const NATIVE_ABORT = /Assertion failed|Segmentation fault|core dumped|FATAL ERROR|native stack/i;
// Garbage made every millisecond in a young generation of 1 MB: the collector runs all the
// time, as it does on its own, finalising statements from its own tasks. (A forced gc() runs
// the finalisers inside JavaScript's scope and hides the fault: better-sqlite3 12 on Node 24
// passed that, and aborted in 3 of 6 start-ups under this.)
const CHURN =
  "let garbage; setInterval(() => { garbage = Array.from({ length: 20000 }, () => ({ a: [1, 2, 3] })); }, 1).unref();";
/** The log lines of failed requests and errors, to show when a check fails. */
const failures = (output: string) =>
  output
    .split("\n")
    .filter((line) => /"level":50|"statusCode":5/.test(line))
    .join("\n");
const COLLECT_ALWAYS = ["--max-semi-space-size=1", "--import", `data:text/javascript,${CHURN}`];

describe(`node:sqlite on Node ${process.version}`, () => {
  test("stores opened, migrated, used and dropped 200 times while the collector runs: exit 0", () => {
    const dir = mkdtempSync(join(tmpdir(), "books-gc-"));
    // Half the stores are closed, half left to the collector with their statements open.
    const script = `
      import { openSqliteStore } from "./dist/store/sqlite/store.js";
      for (let i = 0; i < 200; i++) {
        const store = openSqliteStore(i % 2 ? ":memory:" : ${JSON.stringify(dir)} + "/b" + i + ".db");
        const { id } = await store.create({ title: "Dune", author: "Frank Herbert", year: 1965 });
        await store.update(id, { year: 1966 });
        for (const sort of ["id", "title", "author", "year"]) {
          await store.list({ after: 0, limit: 5, sort, descending: i % 3 === 0 });
        }
        if (i % 2) await store.close();
        if (i % 20 === 0) globalThis.gc();
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      globalThis.gc();
      console.log("done");
    `;
    const run = spawnSync(
      process.execPath,
      [...COLLECT_ALWAYS, "--expose-gc", "--input-type=module", "--eval", script],
      { encoding: "utf8", timeout: 120_000 },
    );
    rmSync(dir, { recursive: true, force: true });
    assert.doesNotMatch(run.stderr, NATIVE_ABORT);
    assert.equal(run.signal, null, run.stderr);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), "done");
  });

  test("the server while the collector runs: starts, serves mixed load, exits 0 on SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-gc-"));
    try {
      const service = await startService(
        {
          HOST: "127.0.0.1",
          PORT: "0",
          DB_URL: `sqlite:${join(dir, "books.db")}`,
          SECRET_TOKEN: "gc-test-secret-of-more-than-32-bytes",
          AUTH_USERNAME: CREDENTIALS.username,
          AUTH_PASSWORD: CREDENTIALS.password,
        },
        { nodeArgs: COLLECT_ALWAYS },
      );
      const token = await login(service, CREDENTIALS);
      const statuses = new Map<number, number>();
      const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
      // Eight clients, 60 rounds each: create, read, update, a listing with new filters
      // (a new cached page each time), sorted listings, delete every third book.
      await Promise.all(
        Array.from({ length: 8 }, async (_, client) => {
          for (let n = 0; n < 60; n++) {
            const created = await request<Book>(service, "POST", "/book", token, {
              title: `Title ${client}-${n}`,
              author: `Author ${n % 7}`,
              year: 1900 + n,
            });
            count(created.status);
            const id = created.body.data?.id;
            count((await request(service, "GET", `/book/${id}`, token)).status);
            count((await request(service, "PUT", `/book/${id}`, token, { year: 2000 })).status);
            const sort = ["title", "-author", "year", "-id"][n % 4];
            const listing = `/books?limit=5&sort=${sort}&author=Author%20${n % 7}&year=${1900 + n}`;
            count((await request(service, "GET", listing, token)).status);
            if (n % 3 === 0) count((await request(service, "DELETE", `/book/${id}`, token)).status);
          }
        }),
      );
      assert.deepEqual([...statuses.keys()].sort(), [200, 201], failures(service.output()));
      assert.equal(await service.stop("SIGTERM"), 0, service.output());
      assert.doesNotMatch(service.output(), NATIVE_ABORT);
      assert.match(service.output(), /"msg":"stopped"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The soak of `npm run soak`, two seconds long: npm must pass the signal on and exit 0.
  // Under each load generator the machine has: autocannon always (a dependency), wrk where
  // installed; either one's requests must all be answered 2xx.
  for (const generator of hasWrk() ? ["autocannon", "wrk"] : ["autocannon"]) {
    test(`npm start as the README says: /health, a book, mixed load from ${generator}, SIGTERM to npm: exit 0`, () => {
      const run = spawnSync(
        process.execPath,
        ["--import", "tsx", "bench/soak.ts", "--seconds", "2", "--generator", generator],
        { encoding: "utf8", timeout: 120_000 },
      );
      assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /all 2xx; SIGTERM: exit 0 in \d+ ms, no native abort/);
    });
  }
});
