// book-catalogue changes, as the package's bin runs it (the built dist/cli/main.js), against a
// service listening here: the entries after --since as JSON lines, page by page; --follow
// then live until Ctrl-C; a 410 as one line.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Change, createClient } from "../../src/client/client.js";
import type { App } from "../../src/http/app.js";
import type { ChangeLog } from "../../src/store/changes.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import type { BookStore } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { buildTestApp, listenLocally, TEST_PASSWORD, TEST_USERNAME } from "../support/helpers.js";

const CLI = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "cli", "main.js");
const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };

/** Runs the command; resolves with its exit code and output, never rejects. */
function run(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH ?? "" } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const parsed = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Change);

describe("book-catalogue changes", () => {
  let store: BookStore;
  let app: App;
  let connection: string[];
  let client: ReturnType<typeof createClient>;
  const latest = () => (store.changes as ChangeLog).latest();

  before(async () => {
    store = openSqliteStore(":memory:");
    app = await buildTestApp({ store });
    const url = await listenLocally(app);
    connection = ["--url", url, "--username", TEST_USERNAME, "--password", TEST_PASSWORD];
    client = createClient({ baseUrl: url, username: TEST_USERNAME, password: TEST_PASSWORD });
  });
  after(async () => {
    await app?.close();
  });

  test("--since N: the entries after N, one JSON line each, page after page to the end", async () => {
    const since = await latest();
    const book = await client.createBook(DUNE);
    for (let year = 1966; year < 1970; year++) await client.updateBook(book.id, { year });
    await client.deleteBook(book.id);
    const { code, stdout, stderr } = await run([
      "changes",
      "--since",
      `${since}`,
      "--limit",
      "2",
      ...connection,
    ]);
    assert.equal(code, 0, stderr);
    assert.equal(stderr, "");
    const changes = parsed(stdout);
    assert.deepEqual(
      changes.map((change) => [change.seq, change.op, change.book?.year ?? null]),
      [
        [since + 1, "create", 1965],
        ...[1966, 1967, 1968, 1969].map((year, i) => [since + 2 + i, "update", year]),
        [since + 6, "delete", null],
      ],
    );
    assert.deepEqual(changes[0]?.by, { name: TEST_USERNAME, account: null });
    const after = await run(["changes", "--since", `${since + 5}`, ...connection]);
    assert.deepEqual(
      parsed(after.stdout).map((change) => change.seq),
      [since + 6],
    );
  });

  test("--follow prints a write made after it started; Ctrl-C ends it cleanly, exit 130", async () => {
    const since = await latest();
    await client.createBook({ ...DUNE, year: 1 });
    const child = spawn(
      process.execPath,
      [CLI, "changes", "--since", `${since}`, "--follow", ...connection],
      {
        env: { PATH: process.env.PATH ?? "" },
      },
    );
    let stdout = "";
    let stderr = "";
    let waiting: { count: number; resolve: () => void } | undefined;
    const check = () => {
      if (waiting && stdout.split("\n").length > waiting.count) waiting.resolve();
    };
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      check();
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    /** Resolves once standard output holds `count` whole lines. */
    const lines = (count: number) =>
      new Promise<void>((resolve) => {
        waiting = { count, resolve };
        check();
      });
    await lines(1);
    // The log's end is a moment after the first line; the stream follows it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await client.createBook({ ...DUNE, year: 2 });
    await lines(2);
    child.kill("SIGINT");
    assert.equal(await exited, 130, stderr);
    assert.equal(stderr, "");
    assert.deepEqual(
      parsed(stdout).map((change) => [change.seq, change.book?.year]),
      [
        [since + 1, 1],
        [since + 2, 2],
      ],
    );
  });

  test("a --since no longer kept: one line saying where to go on, exit 1; a wrong command, exit 2", async () => {
    await client.createBook(DUNE);
    const newest = await latest();
    await (store.changes as ChangeLog).trim({ days: 30, entries: 0 });
    const gone = await run(["changes", "--since", "0", ...connection]);
    assert.equal(gone.code, 1);
    assert.equal(gone.stdout, "");
    assert.equal(
      gone.stderr,
      `book-catalogue: the service answered 410: Changes no longer kept (the oldest kept is ${newest + 1}: read the catalogue again, with export, then go on with changes --since ${newest})\n`,
    );
    for (const [args, pattern] of [
      [[], /changes needs --since N/],
      [["--since", "x"], /--since takes a whole number from 0/],
      [["--since", "0", "--limit", "1001"], /--limit takes a whole number from 1 to 1000/],
    ] as const) {
      const { code, stderr } = await run(["changes", ...args, ...connection]);
      assert.equal(code, 2, args.join(" "));
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, pattern);
    }
  });
});
