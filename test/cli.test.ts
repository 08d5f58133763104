// The book-catalogue command, as the package's bin runs it (the built dist/cli.js).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Book, createClient } from "../src/client.js";
import { type Service, startService } from "./service.js";

const CLI = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "cli.js");
const CREDENTIALS = { username: "librarian", password: "cli-test-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  SECRET_TOKEN: "cli-test-secret-of-at-least-32-bytes",
};

/** Runs the command; resolves with its exit code and output, never rejects. */
function run(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH ?? "", ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const quote = (value: string) => `"${value.replaceAll('"', '""')}"`;

describe("book-catalogue", () => {
  let dir: string;
  let service: Service;
  let connection: string[];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "books-cli-"));
    service = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "a.db")}` },
      { direct: true },
    );
    connection = [
      "--url",
      service.url,
      "--username",
      CREDENTIALS.username,
      "--password",
      CREDENTIALS.password,
    ];
  });
  after(async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("--help for the command and for each subcommand", async () => {
    for (const args of [
      ["--help"],
      [],
      ...["serve", "token", "import", "export"].map((c) => [c, "--help"]),
    ]) {
      const { code, stdout } = await run(args);
      assert.equal(code, 0, args.join(" "));
      assert.match(stdout, /^Usage: book-catalogue/);
    }
  });

  test("errors are one clear line and a non-zero exit", async () => {
    for (const [args, pattern] of [
      [["frobnicate"], /unknown command "frobnicate"/],
      [["import"], /import takes one FILE/],
      [["import", join(dir, "missing.csv"), ...connection], /cannot read/],
      [["export", "--format", "xml", ...connection], /--format is json or csv/],
      [["token", "--url", "http://127.0.0.1:1"], /cannot reach the service/],
      [
        ["token", "--url", service.url, "--username", "x", "--password", "y"],
        /401: Invalid credentials/,
      ],
      [["export", "--bogus"], /Unknown option '--bogus'/],
    ] as const) {
      const { code, stderr } = await run([...args]);
      assert.equal(code, 1, args.join(" "));
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, /^book-catalogue: /);
      assert.match(stderr, pattern);
    }
  });

  test("token prints a working token", async () => {
    const { code, stdout } = await run(["token", ...connection]);
    assert.equal(code, 0);
    const response = await fetch(`${service.url}/books`, {
      headers: { authorization: stdout.trim() },
    });
    assert.equal(response.status, 200);
  });

  test("importing a 10,000-row Goodreads export: progress, a report of the bad rows, the rest imported", async () => {
    const header =
      "Book Id,Title,Author,Author l-f,ISBN,My Rating,Year Published,Original Publication Year";
    const bad = new Map<number, RegExp>([
      [17, /title/],
      [250, /year/],
      [4999, /year/],
      [9000, /author/],
    ]);
    const lines = [header];
    for (let row = 1; row <= 10_000; row++) {
      const title = row === 17 ? "" : `Book, "${row}"`;
      const author = row === 9000 ? "" : `Author ${row % 97}`;
      const original =
        row === 250
          ? "twelve"
          : row === 4999
            ? "12000"
            : row % 3 === 0
              ? ""
              : String(1900 + (row % 120));
      lines.push(
        [row, quote(title), quote(author), quote("x"), '"=""0441013593"""', 4, 2001, original].join(
          ",",
        ),
      );
    }
    const file = join(dir, "goodreads_library_export.csv");
    writeFileSync(file, `\uFEFF${lines.join("\n")}\n`);

    const dry = await run(["import", file, "--dry-run"]);
    assert.equal(dry.code, 1);
    assert.match(dry.stdout, /would import \(dry run\) 9996 of 10000 rows; rejected 4/);
    const client = createClient({ baseUrl: service.url, ...CREDENTIALS });
    assert.equal((await client.listPage({ limit: 1 })).books.length, 0, "a dry run sends nothing");

    const { code, stdout, stderr } = await run(["import", file, ...connection]);
    assert.equal(code, 1, "rows were rejected");
    assert.match(stdout, /^imported 9996 of 10000 rows; rejected 4$/m);
    const progressLines = stderr.split("\n").filter((line) => line.startsWith("progress: "));
    assert.ok(progressLines.length >= 10, stderr.slice(0, 500));
    assert.match(progressLines.at(-1) ?? "", /^progress: 10000\/10000 imported 9996, rejected 4$/);
    const reported = stderr.split("\n").filter((line) => line.startsWith("rejected row "));
    assert.deepEqual(
      reported.map((line) => Number(/^rejected row (\d+)/.exec(line)?.[1])),
      [...bad.keys()],
    );
    for (const line of reported) {
      const row = Number(/^rejected row (\d+)/.exec(line)?.[1]);
      assert.match(line, bad.get(row) as RegExp);
    }
    const books: Book[] = [];
    for await (const book of client.books()) books.push(book);
    assert.equal(books.length, 9996);
    assert.deepEqual(
      books.find((b) => b.title === 'Book, "3"'),
      {
        id: books.find((b) => b.title === 'Book, "3"')?.id,
        title: 'Book, "3"',
        author: "Author 3",
        year: 2001,
      },
      "Year Published stands in for an empty Original Publication Year",
    );
  });

  test("export, then import into another catalogue: the same books", async () => {
    const json = await run(["export", ...connection]);
    assert.equal(json.code, 0);
    const exported = JSON.parse(json.stdout) as Book[];
    assert.ok(exported.length > 0);
    const csv = await run(["export", "--format", "csv", ...connection]);
    assert.equal(csv.code, 0);
    assert.equal(csv.stdout.split("\n")[0], "id,title,author,year");

    const other = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "b.db")}` },
      { direct: true },
    );
    try {
      const file = join(dir, "export.json");
      writeFileSync(file, json.stdout);
      const otherConnection = [
        "--url",
        other.url,
        "--username",
        CREDENTIALS.username,
        "--password",
        CREDENTIALS.password,
      ];
      const imported = await run(["import", file, "--concurrency", "1", ...otherConnection]);
      assert.equal(imported.code, 0, imported.stderr);
      const again = JSON.parse((await run(["export", ...otherConnection])).stdout) as Book[];
      const fields = (books: Book[]) =>
        books.map(({ title, author, year }) => ({ title, author, year }));
      assert.deepEqual(fields(again), fields(exported));
      const csvAgain = await run(["export", "--format", "csv", ...otherConnection]);
      assert.deepEqual(
        csvAgain.stdout
          .split("\n")
          .slice(1)
          .map((line) => line.replace(/^\d+,/, "")),
        csv.stdout
          .split("\n")
          .slice(1)
          .map((line) => line.replace(/^\d+,/, "")),
      );
    } finally {
      await other.stop();
    }
  });
});
