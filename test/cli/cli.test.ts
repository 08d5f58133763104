// The book-catalogue command, as the package's bin runs it (the built dist/cli/main.js).
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Book, createClient } from "../../src/client/client.js";
import { describe } from "../support/describe.js";
import { FORMULA_TITLES } from "../support/helpers.js";
import { freePort, type Service, startService } from "../support/service.js";

const CLI = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "cli", "main.js");
const CREDENTIALS = { username: "librarian", password: "cli-test-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  SECRET_TOKEN: "cli-test-secret-of-at-least-32-bytes",
};

/** Runs a program; resolves with its exit code and output, never rejects. */
function execute(file: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      file,
      args,
      { env: { PATH: process.env.PATH ?? "", ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs the command; resolves with its exit code and output, never rejects. */
const run = (args: string[], env: Record<string, string> = {}) =>
  execute(process.execPath, [CLI, ...args], env);

/**
 * Runs the command under bash, with `shell` after it (`| head -1`); pipefail makes the command's
 * status the shell's. --norc: bash reads ~/.bashrc when its standard input is a socket.
 */
const runInShell = (args: string[], shell: string) =>
  execute("bash", [
    "--norc",
    "-c",
    `set -o pipefail; "$0" "$@" ${shell}`,
    process.execPath,
    CLI,
    ...args,
  ]);

/** The options that point a command at a running service, as the test's librarian. */
const connectionTo = (service: Service) => [
  "--url",
  service.url,
  "--username",
  CREDENTIALS.username,
  "--password",
  CREDENTIALS.password,
];

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
    connection = connectionTo(service);
  });
  after(async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("--help for the command and for each subcommand", async () => {
    for (const args of [
      ["--help"],
      ...["serve", "token", "import", "export"].map((c) => [c, "--help"]),
    ]) {
      const { code, stdout } = await run(args);
      assert.equal(code, 0, args.join(" "));
      assert.match(stdout, /^Usage: book-catalogue/);
    }
  });

  test("--version prints the package's version", async () => {
    const root = join(dirname(CLI), "..", "..");
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    assert.match(version, /^\d+\.\d+\.\d+/);
    for (const flag of ["--version", "-v"]) {
      assert.deepEqual(await run([flag]), { code: 0, stdout: `${version}\n`, stderr: "" });
    }
  });

  test("no command: the usage on standard error, exit 2", async () => {
    const { code, stdout, stderr } = await run([]);
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.match(stderr, /^Usage: book-catalogue/);
  });

  test("errors are one clear line; exit 2 when the command or file cannot be used, 1 when the service fails", async () => {
    for (const [args, pattern, exit] of [
      [["frobnicate"], /unknown command "frobnicate"/, 2],
      [["import"], /import takes one FILE/, 2],
      [["import", join(dir, "missing.csv"), ...connection], /cannot read/, 2],
      [["import", "x.csv", "--duplicates", "maybe"], /--duplicates is skip or keep/, 2],
      [["export", "--format", "xml", ...connection], /--format is json or csv/, 2],
      [["export", "--bogus"], /Unknown option '--bogus'/, 2],
      [
        // A port nothing listens on: the connection is refused.
        ["token", "--url", `http://127.0.0.1:${await freePort()}`],
        /^book-catalogue: cannot reach the service at http:\/\/127\.0\.0\.1:\d+: .+ \(is it running\? --url\)$/m,
        1,
      ],
      [
        ["token", "--url", service.url, "--username", "x", "--password", "y"],
        /401: Invalid credentials/,
        1,
      ],
    ] as const) {
      const { code, stderr } = await run([...args]);
      assert.equal(code, exit, args.join(" "));
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, /^book-catalogue: /);
      assert.match(stderr, pattern);
      // Nothing that moves the terminal or the text: a line feed ends the line, nothing else.
      assert.doesNotMatch(stderr.slice(0, -1), /[\p{Cc}\p{Cf}]/u, args.join(" "));
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
    // Row n is on line n + 1, below the header.
    const bad = new Map<number, string>([
      [17, "line 18: the title is empty"],
      [250, 'line 251 ("Book, \\"250\\""): the year must be a whole number from -9999 to 9999'],
      [4999, 'line 5000 ("Book, \\"4999\\""): the year must be a whole number from -9999 to 9999'],
      [9000, 'line 9001 ("Book, \\"9000\\""): the author is empty'],
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

    const dry = await run(["import", file, "--dry-run", ...connection]);
    assert.equal(dry.code, 1);
    assert.equal(
      dry.stdout,
      "dry run: 9996 of 10000 rows would be imported; 0 duplicates skipped; 4 refused\n",
    );
    assert.doesNotMatch(dry.stderr, /imported/);
    const client = createClient({ baseUrl: service.url, ...CREDENTIALS });
    assert.equal((await client.listPage({ limit: 1 })).books.length, 0, "a dry run sends nothing");

    // Eight at a time: faster, and the order of the books is not the file's.
    const { code, stdout, stderr } = await run([
      "import",
      file,
      "--concurrency",
      "8",
      ...connection,
    ]);
    assert.equal(code, 1, "rows were refused");
    assert.equal(stdout, "imported 9996 of 10000 rows; 0 duplicates skipped; 4 refused\n");
    const progressLines = stderr.split("\n").filter((line) => line.startsWith("progress: "));
    assert.ok(progressLines.length >= 10, stderr.slice(0, 500));
    assert.equal(
      progressLines.at(-1),
      "progress: 10000/10000 imported 9996, 0 duplicates skipped, 4 refused",
    );
    assert.deepEqual(
      stderr.split("\n").filter((line) => line.startsWith("refused ")),
      [...bad.values()].map((text) => `refused ${text}`),
    );
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

  test("duplicates of the catalogue's books and of the file's earlier rows are skipped, case and accents aside; --duplicates keep imports them", async () => {
    const other = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "duplicates.db")}` },
      { direct: true },
    );
    const to = connectionTo(other);
    try {
      const first = join(dir, "first.json");
      writeFileSync(
        first,
        JSON.stringify([
          { title: "Cien años de soledad", author: "Gabriel García Márquez", year: 1967 },
          { title: "Dune", author: "Frank Herbert", year: 1965 },
        ]),
      );
      assert.equal((await run(["import", first, ...to])).code, 0);
      const second = join(dir, "second.csv");
      writeFileSync(
        second,
        [
          "title,author,year",
          "CIEN ANOS DE SOLEDAD,gabriel garcia marquez,1967",
          "Dune,Frank Herbert,1966",
          "dune,FRANK HERBERT,1966",
          "Emma,Jane Austen,1815",
        ].join("\n"),
      );
      const dry = await run(["import", second, "--dry-run", ...to]);
      assert.equal(
        dry.stdout,
        "dry run: 2 of 4 rows would be imported; 2 duplicates skipped; 0 refused\n",
      );
      const skipped = await run(["import", second, ...to]);
      assert.equal(skipped.code, 0, skipped.stderr);
      // Another year is another book; a row that repeats an earlier row of the file is skipped.
      assert.equal(skipped.stdout, "imported 2 of 4 rows; 2 duplicates skipped; 0 refused\n");
      const kept = await run(["import", second, "--duplicates", "keep", ...to]);
      assert.equal(kept.stdout, "imported 4 of 4 rows; 0 duplicates skipped; 0 refused\n");
      const titles = (JSON.parse((await run(["export", ...to])).stdout) as Book[]).map(
        (b) => `${b.title} ${b.year}`,
      );
      assert.deepEqual(titles, [
        "Cien años de soledad 1967",
        "Dune 1965",
        "Dune 1966",
        "Emma 1815",
        "CIEN ANOS DE SOLEDAD 1967",
        "Dune 1966",
        "dune 1966",
        "Emma 1815",
      ]);
    } finally {
      await other.stop();
    }
  });

  test("refused rows: the file's line, the title, and a plain reason; nothing else is wrong with the file", async () => {
    const file = join(dir, "reasons.json");
    writeFileSync(
      file,
      [
        "[",
        '  {"title": "Good", "author": "Writer", "year": 2000},',
        '  {"title": "No year", "author": "Writer"},',
        '  {"title": "   ", "author": "Writer", "year": 2000},',
        "  {",
        '    "title": "Fractional",',
        '    "author": "",',
        '    "year": 1999.5',
        "  },",
        '  {"title": "Too late", "author": "Writer", "year": "12000"},',
        '  {"author": 42, "year": 2000},',
        '  {"title": "Esc\\u001b[2J\\u009b31m turned \\u202e", "author": "Writer"}',
        "]",
      ].join("\n"),
    );
    const { code, stdout, stderr } = await run(["import", file, "--dry-run", ...connection]);
    assert.equal(code, 1);
    assert.equal(
      stdout,
      "dry run: 1 of 7 rows would be imported; 0 duplicates skipped; 6 refused\n",
    );
    assert.deepEqual(
      stderr.split("\n").filter((line) => line.startsWith("refused ")),
      [
        'refused line 3 ("No year"): the year is missing',
        "refused line 4: the title is empty",
        'refused line 5 ("Fractional"): the author is empty; the year must be a whole number from -9999 to 9999',
        'refused line 10 ("Too late"): the year must be a whole number from -9999 to 9999',
        "refused line 11: the title is missing; the author must be text",
        // A title's escape sequences and overrides written out, never played on the terminal.
        'refused line 12 ("Esc\\u001b[2J\\u{9b}31m turned \\u{202e}"): the year is missing',
      ],
    );
  });

  test("a refused row is reported at the line it starts on, in LF and CRLF files", async () => {
    for (const [name, eol] of [
      ["lf", "\n"],
      ["crlf", "\r\n"],
    ] as const) {
      const file = join(dir, `multi-line-${name}.csv`);
      writeFileSync(
        file,
        [
          "title,author,year", // 1
          `"Notes${eol}on${eol}three lines",Writer,1901`, // 2-4
          `"No${eol}year",Writer,`, // 5-6
          "", // 7
          `Die Straße,"Ann${eol}Petry",`, // 8-9
          `"Too${eol}late",Writer,12000`, // 10-11
          "",
        ].join(eol),
      );
      const { stderr } = await run(["import", file, "--dry-run", ...connection]);
      assert.deepEqual(
        stderr.split("\n").filter((line) => line.startsWith("refused ")),
        [
          `refused line 5 (${JSON.stringify(`No${eol}year`)}): the year is missing`,
          'refused line 8 ("Die Straße"): the year is missing',
          `refused line 10 (${JSON.stringify(`Too${eol}late`)}): the year must be a whole number from -9999 to 9999`,
        ],
        name,
      );
    }
  });

  test("a file that is not a list of books, or lacks a column, is refused whole with exit 2", async () => {
    const cases = [
      [
        "object.json",
        '{"title": "Dune", "author": "Frank Herbert", "year": 1965}',
        /is not a list of books/,
      ],
      ["broken.json", '[{"title": "Dune",', /is not valid JSON/],
      [
        "no-title.csv",
        "Name,Author,Year\nDune,Frank Herbert,1965\nEmma,Jane Austen,1815\n",
        /has no column for the title \("title" or "Title"\); its header: Name,Author,Year/,
      ],
      ["nothing.csv", "", /is not a list of books/],
      // What the file holds is written out in the line, never played on the terminal.
      [
        "crafted.csv",
        "\u001b]0;owned\u0007\u001b[2J,\u202eAuthor,Year\nDune,Frank Herbert,1965\n",
        /its header: \\u\{1b\}\]0;owned\\u\{7\}\\u\{1b\}\[2J,\\u\{202e\}Author,Year$/m,
      ],
      ["crafted.json", "[\u009b31m\u202e]", /is not valid JSON.*\\u\{9b\}31m\\u\{202e\}/],
    ] as const;
    for (const [name, text, pattern] of cases) {
      const file = join(dir, name);
      writeFileSync(file, text);
      const { code, stdout, stderr } = await run(["import", file, ...connection]);
      assert.equal(code, 2, name);
      assert.equal(stdout, "");
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, pattern);
      // Nothing that moves the terminal or the text: a line feed ends the line, nothing else.
      assert.doesNotMatch(stderr.slice(0, -1), /[\p{Cc}\p{Cf}]/u, name);
    }
  });

  test("Ctrl-C during an import: it stops after the book on its way and says what went in, exit 130", async () => {
    const other = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "interrupted.db")}` },
      { direct: true },
    );
    try {
      const total = 20_000;
      const file = join(dir, "large.csv");
      const rows = Array.from({ length: total }, (_, i) => `Book ${i},Author ${i % 97},1900`);
      writeFileSync(file, ["title,author,year", ...rows].join("\n"));
      const child = spawn(process.execPath, [CLI, "import", file, ...connectionTo(other)], {
        env: { PATH: process.env.PATH ?? "" },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      // The first progress line (every 1,000 rows), then Ctrl-C.
      await new Promise<void>((resolve) =>
        child.stderr.on("data", (chunk) => {
          stderr += chunk;
          if (stderr.includes("progress: ") && !child.killed) {
            child.kill("SIGINT");
            resolve();
          }
        }),
      );
      assert.equal(await exited, 130, stderr);
      const summary =
        /^interrupted: imported (\d+) of 20000 rows; 0 duplicates skipped; 0 refused; (\d+) rows left\n$/.exec(
          stdout,
        );
      assert.ok(summary, stdout);
      const [imported, left] = [Number(summary[1]), Number(summary[2])];
      assert.ok(imported >= 1000 && imported < total, `${imported} imported`);
      assert.equal(imported + left, total);
      const client = createClient({ baseUrl: other.url, ...CREDENTIALS });
      let stored = 0;
      for await (const _ of client.books()) stored += 1;
      assert.equal(stored, imported, "the summary counts what the catalogue holds");
    } finally {
      await other.stop();
    }
  });

  test("export, then import into the same catalogue: nothing added, every row a duplicate", async () => {
    const before = await run(["export", ...connection]);
    const books = JSON.parse(before.stdout) as Book[];
    const file = join(dir, "same.json");
    writeFileSync(file, before.stdout);
    const again = await run(["import", file, ...connection]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(
      again.stdout,
      `imported 0 of ${books.length} rows; ${books.length} duplicates skipped; 0 refused\n`,
    );
    assert.equal((await run(["export", ...connection])).stdout, before.stdout);
  });

  test("export, then import into an empty catalogue: the same books in the same order", async (t) => {
    // A catalogue of its own, of 500 varied books: the import goes one book at a time, as the
    // order needs, so the 10,000 above would take most of this file's time.
    const source = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "source.db")}` },
      { direct: true },
    );
    t.after(() => source.stop());
    const other = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "b.db")}` },
      { direct: true },
    );
    t.after(() => other.stop());
    const seed = join(dir, "seed.json");
    const titles = ['Book, "quoted"', "Cien años de soledad", "三体", "Line\nbreak", "=1+1"];
    const seeded = Array.from({ length: 500 }, (_, i) => ({
      title: `${titles[i % titles.length]} ${i}`,
      author: `Author ${i % 37}`,
      year: ((i * 7919) % 4000) - 1000,
    }));
    writeFileSync(seed, JSON.stringify(seeded));
    const sourceConnection = connectionTo(source);
    const seeding = await run(["import", seed, "--concurrency", "8", ...sourceConnection]);
    assert.equal(seeding.code, 0, seeding.stderr);
    const json = await run(["export", ...sourceConnection]);
    assert.equal(json.code, 0);
    const exported = JSON.parse(json.stdout) as Book[];
    assert.equal(exported.length, seeded.length);
    const csv = await run(["export", "--format", "csv", ...sourceConnection]);
    assert.equal(csv.code, 0);
    assert.equal(csv.stdout.split("\n")[0], "\uFEFFid,title,author,year");

    const file = join(dir, "export.json");
    writeFileSync(file, json.stdout);
    const otherConnection = connectionTo(other);
    const imported = await run(["import", file, ...otherConnection]);
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
  });

  test("CSV export starts with a UTF-8 byte-order mark, --no-bom leaves it out; import reads either", async () => {
    const csv = await run(["export", "--format", "csv", ...connection]);
    assert.equal(csv.code, 0, csv.stderr);
    assert.ok(csv.stdout.startsWith("\uFEFFid,title,author,year\n"), csv.stdout.slice(0, 30));
    const bare = await run(["export", "--format", "csv", "--no-bom", ...connection]);
    assert.equal(bare.stdout, csv.stdout.slice(1));
    assert.match(
      (await run(["export", "--help"])).stdout,
      /--no-bom {2,}CSV without the byte-order mark/,
    );
    const marked = join(dir, "marked.csv");
    const unmarked = join(dir, "unmarked.csv");
    assert.equal((await run(["export", "--format", "csv", "-o", marked, ...connection])).code, 0);
    assert.equal(
      (await run(["export", "--format", "csv", "--no-bom", "-o", unmarked, ...connection])).code,
      0,
    );
    assert.deepEqual([...readFileSync(marked).subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.deepEqual(readFileSync(unmarked), Buffer.from(bare.stdout));
    // Either file reads as the catalogue's own books: every row a duplicate.
    const count = csv.stdout.trimEnd().split("\n").length - 1;
    for (const file of [marked, unmarked]) {
      const again = await run(["import", file, "--dry-run", ...connection]);
      assert.equal(
        again.stdout,
        `dry run: 0 of ${count} rows would be imported; ${count} duplicates skipped; 0 refused\n`,
        file,
      );
    }
  });

  test("CSV export neutralises formulas; import into an empty catalogue gives the same books back", async () => {
    const source = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "formulas.db")}` },
      { direct: true },
    );
    const target = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "formulas-again.db")}` },
      { direct: true },
    );
    try {
      const [from, to] = [connectionTo(source), connectionTo(target)];
      const books = [...FORMULA_TITLES, "Dune"].map((title, i) => ({
        title,
        author: ["Writer", "=Author", "-Anonymous", "'Quoted"][i % 4] as string,
        year: i === 0 ? -500 : 1900 + i,
      }));
      const json = join(dir, "formulas.json");
      writeFileSync(json, JSON.stringify(books));
      assert.equal((await run(["import", json, ...from])).code, 0);

      const csv = await run(["export", "--format", "csv", ...from]);
      assert.equal(csv.code, 0, csv.stderr);
      assert.ok(csv.stdout.startsWith("\uFEFFid,title,author,year\n"), csv.stdout.slice(0, 30));
      const lines = csv.stdout.split("\n");
      assert.equal(lines[1], `1,"'=HYPERLINK(""http://x"")",Writer,-500`);
      assert.equal(lines[2], "2,'+cmd,'=Author,1901");
      // No title or author starts with a character a spreadsheet runs (a year is a number).
      for (const line of lines.slice(1, -1)) {
        assert.doesNotMatch(line.replace(/,-?\d+$/, ""), /,"?[=+\-@\t\r]/);
      }
      const bare = await run(["export", "--format", "csv", "--no-bom", ...from]);
      assert.equal(bare.stdout, csv.stdout.slice(1));
      const output = join(dir, "formulas-bare.csv");
      assert.equal(
        (await run(["export", "--format", "csv", "--no-bom", "-o", output, ...from])).code,
        0,
      );
      assert.deepEqual(readFileSync(output), Buffer.from(bare.stdout));

      // With the mark and without, the file reads as the same books.
      const withBom = join(dir, "formulas.csv");
      writeFileSync(withBom, csv.stdout);
      const imported = await run(["import", withBom, ...to]);
      assert.equal(imported.code, 0, imported.stderr);
      const fields = (list: Book[]) =>
        list.map(({ title, author, year }) => ({ title, author, year }));
      const exported = (connection: string[]) =>
        run(["export", ...connection]).then(({ stdout }) => JSON.parse(stdout) as Book[]);
      assert.deepEqual(fields(await exported(to)), books);
      assert.deepEqual(fields(await exported(from)), books);
      const again = await run(["import", output, "--dry-run", ...to]);
      assert.equal(
        again.stdout,
        `dry run: 0 of ${books.length} rows would be imported; ${books.length} duplicates skipped; 0 refused\n`,
      );
    } finally {
      await source.stop();
      await target.stop();
    }
  });
});

describe("book-catalogue export never leaves a misleading file", () => {
  let dir: string;
  let service: Service;
  let connection: string[];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "books-export-"));
    service = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "export.db")}` },
      { direct: true },
    );
    connection = connectionTo(service);
    // Enough books that an export outlives a reader that stops at the first line.
    const books = Array.from({ length: 3000 }, (_, i) => ({
      title: `Book ${i + 1}`,
      author: `Author ${i % 50}`,
      year: 1900 + (i % 120),
    }));
    const file = join(dir, "books.json");
    writeFileSync(file, JSON.stringify(books));
    const imported = await run(["import", file, "--concurrency", "8", ...connection]);
    assert.equal(imported.code, 0, imported.stderr);
  });
  after(async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Exports that fail before the first book: the service down, the password refused. */
  const failures = async () =>
    [
      ["the service down", ["--url", `http://127.0.0.1:${await freePort()}`]],
      [
        "a wrong password",
        ["--url", service.url, "--username", CREDENTIALS.username, "--password", "wrong"],
      ],
    ] as const;

  test("the service down or a wrong password: exit 1, one line, nothing on standard output", async () => {
    for (const [why, to] of await failures()) {
      for (const format of ["json", "csv"]) {
        const { code, stdout, stderr } = await run(["export", "--format", format, ...to]);
        assert.equal(code, 1, `${why}, ${format}`);
        assert.equal(stdout, "", `${why}, ${format}`);
        assert.equal(stderr.trim().split("\n").length, 1, stderr);
        assert.match(stderr, /^book-catalogue: /);
      }
    }
  });

  test("--output: a failure leaves the existing file byte-identical, and no temporary file", async () => {
    const folder = mkdtempSync(join(dir, "backups-"));
    const file = join(folder, "backup.json");
    const good = '[\n{"id":1,"title":"Dune","author":"Frank Herbert","year":1965}\n]\n';
    writeFileSync(file, good);
    for (const [why, to] of await failures()) {
      for (const option of ["--output", "-o"]) {
        const { code, stdout, stderr } = await run(["export", option, file, ...to]);
        assert.equal(code, 1, `${why}, ${option}`);
        assert.equal(stdout, "");
        assert.match(stderr, /^book-catalogue: /);
        assert.deepEqual(readFileSync(file), Buffer.from(good), `${why}, ${option}`);
        assert.deepEqual(readdirSync(folder), ["backup.json"], `${why}, ${option}`);
      }
    }
  });

  test("--output writes the bytes standard output gets, replacing the file", async () => {
    const folder = mkdtempSync(join(dir, "exports-"));
    for (const format of ["json", "csv"]) {
      const expected = await run(["export", "--format", format, ...connection]);
      assert.equal(expected.code, 0, expected.stderr);
      const file = join(folder, `catalogue.${format}`);
      writeFileSync(file, "an older export");
      const written = await run(["export", "--format", format, "--output", file, ...connection]);
      assert.equal(written.code, 0, written.stderr);
      assert.equal(written.stdout, "");
      assert.deepEqual(readFileSync(file), Buffer.from(expected.stdout), format);
    }
    const books = JSON.parse(readFileSync(join(folder, "catalogue.json"), "utf8")) as Book[];
    assert.equal(books.length, 3000);
    assert.deepEqual(readdirSync(folder).sort(), ["catalogue.csv", "catalogue.json"]);
  });

  test("an empty catalogue: [] in JSON, the header line in CSV", async () => {
    const empty = await startService(
      { ...ENV, DB_URL: `sqlite:${join(dir, "empty.db")}` },
      { direct: true },
    );
    try {
      const to = connectionTo(empty);
      const file = join(dir, "empty.csv");
      assert.deepEqual(await run(["export", ...to]), { code: 0, stdout: "[]\n", stderr: "" });
      assert.deepEqual(await run(["export", "--format", "csv", ...to]), {
        code: 0,
        stdout: "\uFEFFid,title,author,year\n",
        stderr: "",
      });
      assert.equal((await run(["export", "--format", "csv", "-o", file, ...to])).code, 0);
      assert.equal(readFileSync(file, "utf8"), "\uFEFFid,title,author,year\n");
    } finally {
      await empty.stop();
    }
  });

  test("export | head -1: the reader stops early, the export ends quietly with status 0", async () => {
    for (const [format, line] of [
      ["json", "[\n"],
      ["csv", "\uFEFFid,title,author,year\n"],
    ] as const) {
      const piped = await runInShell(["export", "--format", format, ...connection], "| head -1");
      assert.deepEqual(piped, { code: 0, stdout: line, stderr: "" }, format);
    }
  });

  test("any other failure to write standard output: exit 1, one line", {
    skip: !existsSync("/dev/full") && "no /dev/full here",
  }, async () => {
    const full = await runInShell(["export", ...connection], "> /dev/full");
    assert.equal(full.code, 1);
    assert.equal(full.stdout, "");
    assert.match(full.stderr, /^book-catalogue: ENOSPC: .+\n$/);
  });
});
