#!/usr/bin/env node
// book-catalogue: serve the catalogue, or script it through its API.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { stringify as toCsvRow } from "csv-stringify/sync";
import { CatalogueError, createClient } from "../client/client.js";
import {
  BookFileError,
  checkRow,
  parseBookFile,
  type RowFields,
  sameBookKey,
} from "../rules/import-rows.js";

const HELP = {
  main: `Usage: book-catalogue <command> [options]

Commands:
  serve                 Serve the catalogue, as npm start does (settings: see README)
  token                 Print a token, for scripts
  import FILE           Add books from a JSON array or a CSV file (a Goodreads export works)
  export                Write the whole catalogue to standard output

Options for token, import and export:
  --url URL             The service (default: BOOK_CATALOGUE_URL or http://localhost:8080)
  --username NAME       Default: AUTH_USERNAME or admin
  --password PASSWORD   Default: AUTH_PASSWORD or password

book-catalogue <command> --help tells more.`,
  serve:
    "Usage: book-catalogue serve\n\nServes the catalogue, configured from the environment and .env (see README).",
  token:
    "Usage: book-catalogue token [--url URL] [--username NAME] [--password PASSWORD]\n\nPrints a token valid for 15 minutes.",
  import: `Usage: book-catalogue import FILE [--dry-run] [--duplicates skip|keep] [--concurrency N] [connection options]

Adds the books of FILE, in the file's order: a JSON array of {title, author, year}, or a
CSV file whose header names title, author and year (Goodreads: Title, Author, and Original
Publication Year or Year Published). Ids in the file are ignored.

A row whose title, author and year are those of a book already in the catalogue (case,
accents and punctuation aside) is a duplicate: skipped and counted, unless --duplicates keep.
So importing an export into the same catalogue adds nothing.

Rows that are not books are reported with their line in the file, their title and why.
Exit code: 0 when every row was imported or skipped as a duplicate; 1 when some row was
refused; 2 when the file cannot be used at all (unreadable, not a list of books, a
column missing) or the command is wrong.

  --dry-run             Check every row and count the duplicates, send nothing
  --duplicates keep     Import duplicates too (default: skip)
  --concurrency N       Requests at once (default 1, which keeps the file's order)`,
  export: `Usage: book-catalogue export [--format json|csv] [connection options]

Writes every book, in id order, to standard output: a JSON array (default) or CSV with
the header id,title,author,year.`,
} as const;

/** The command line is wrong: exit 2. */
class UsageError extends Error {}
/** The file cannot be imported at all: exit 2. */
class FileError extends Error {}

/** The file's rows, each with the line of the file it starts on. */
function readRows(path: string): RowFields[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new FileError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return parseBookFile(text);
  } catch (error) {
    if (error instanceof BookFileError) throw new FileError(`${path} ${error.message}`);
    throw error;
  }
}

/** How a refused row is reported: its line, its title when it has one, and why. */
function describeRefusal(
  row: { line: number; title?: string | undefined },
  reason: string,
): string {
  const title = row.title === undefined ? "" : ` (${JSON.stringify(row.title)})`;
  return `line ${row.line}${title}: ${reason}`;
}

/** A progress bar on a terminal; a plain line every 1,000 rows otherwise. */
function progress(total: number, dryRun: boolean) {
  const tty = process.stderr.isTTY;
  let last = 0;
  return (done: number, counts: Counts) => {
    const status = dryRun
      ? `checked, ${counts.rejected} refused`
      : `imported ${counts.imported}, ${counts.duplicates} duplicates skipped, ${counts.rejected} refused`;
    if (tty) {
      const width = 30;
      const filled = Math.round((done / Math.max(total, 1)) * width);
      process.stderr.write(
        `\r[${"#".repeat(filled)}${" ".repeat(width - filled)}] ${done}/${total} ${status}`,
      );
      if (done === total) process.stderr.write("\n");
    } else if (done - last >= 1000 || done === total) {
      last = done;
      process.stderr.write(`progress: ${done}/${total} ${status}\n`);
    }
  };
}

interface Counts {
  imported: number;
  duplicates: number;
  rejected: number;
}

async function importFile(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...connectionOptions,
      "dry-run": { type: "boolean" },
      duplicates: { type: "string" },
      concurrency: { type: "string" },
    },
  });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError("import takes one FILE");
  const concurrency = Number(values.concurrency ?? 1);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new UsageError("--concurrency takes a whole number from 1 to 64");
  }
  const duplicates = values.duplicates ?? "skip";
  if (duplicates !== "skip" && duplicates !== "keep") {
    throw new UsageError("--duplicates is skip or keep");
  }
  const rows = readRows(file).map(checkRow);
  const refusals: { line: number; text: string }[] = [];
  for (const row of rows) {
    if (row.problems)
      refusals.push({ line: row.line, text: describeRefusal(row, row.problems.join("; ")) });
  }
  const valid = rows.filter((row) => row.book !== undefined);
  const client = createClient(connection(values));
  // The catalogue's books before the import: a row equal to one of them is a duplicate.
  // Rows equal to each other are all imported, so an export of a catalogue that holds the
  // same book twice comes back whole.
  const existing = new Set<string>();
  if (duplicates === "skip") {
    for await (const book of client.books()) existing.add(sameBookKey(book));
  }
  const dryRun = values["dry-run"] === true;
  const counts: Counts = { imported: 0, duplicates: 0, rejected: refusals.length };
  const report = progress(rows.length, dryRun);
  let done = refusals.length;
  let next = 0;
  const importer = async () => {
    while (next < valid.length) {
      const row = valid[next++] as (typeof valid)[number];
      if (duplicates === "skip" && existing.has(sameBookKey(row.book))) {
        counts.duplicates += 1;
      } else if (!dryRun) {
        try {
          await client.createBook(row.book);
          counts.imported += 1;
        } catch (error) {
          if (!(error instanceof CatalogueError) || error.status >= 500 || error.status === 401)
            throw error;
          counts.rejected += 1;
          refusals.push({
            line: row.line,
            text: describeRefusal(
              { line: row.line, title: row.book.title },
              `the service refused it: ${error.message}`,
            ),
          });
        }
      }
      done += 1;
      report(done, counts);
    }
  };
  report(done, counts);
  await Promise.all(Array.from({ length: concurrency }, importer));
  refusals.sort((a, b) => a.line - b.line);
  for (const refusal of refusals) process.stderr.write(`refused ${refusal.text}\n`);
  const skipped = `${counts.duplicates} duplicate${counts.duplicates === 1 ? "" : "s"} skipped`;
  process.stdout.write(
    dryRun
      ? `dry run: ${valid.length - counts.duplicates} of ${rows.length} rows would be imported; ${skipped}; ${counts.rejected} refused\n`
      : `imported ${counts.imported} of ${rows.length} rows; ${skipped}; ${counts.rejected} refused\n`,
  );
  if (counts.rejected > 0) process.exitCode = 1;
}

async function exportBooks(args: string[]) {
  const { values } = parseArgs({
    args,
    options: { ...connectionOptions, format: { type: "string" } },
  });
  const format = values.format ?? "json";
  if (format !== "json" && format !== "csv") throw new UsageError("--format is json or csv");
  const client = createClient(connection(values));
  const out = process.stdout;
  const write = (text: string) =>
    out.write(text) ? Promise.resolve() : new Promise((resolve) => out.once("drain", resolve));
  let first = true;
  if (format === "csv") await write(toCsvRow([["id", "title", "author", "year"]]));
  else await write("[");
  for await (const book of client.books()) {
    if (format === "csv") await write(toCsvRow([[book.id, book.title, book.author, book.year]]));
    else await write(`${first ? "\n" : ",\n"}${JSON.stringify(book)}`);
    first = false;
  }
  if (format === "json") await write(first ? "]\n" : "\n]\n");
}

const connectionOptions = {
  url: { type: "string" },
  username: { type: "string" },
  password: { type: "string" },
} as const;

function connection(values: {
  url?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
}) {
  return {
    baseUrl: values.url ?? process.env.BOOK_CATALOGUE_URL ?? "http://localhost:8080",
    username: values.username ?? process.env.AUTH_USERNAME ?? "admin",
    password: values.password ?? process.env.AUTH_PASSWORD ?? "password",
  };
}

async function main(argv: string[]) {
  const [command, ...args] = argv;
  if (command === undefined) {
    process.stderr.write(`${HELP.main}\n`);
    process.exitCode = 2;
    return;
  }
  if (command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(`${HELP.main}\n`);
    return;
  }
  if (!(command in HELP) || command === "main")
    throw new UsageError(`unknown command "${command}"`);
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${HELP[command as keyof typeof HELP]}\n`);
    return;
  }
  switch (command) {
    case "serve":
      if (args.length > 0) throw new UsageError("serve takes no arguments");
      await import("../server/main.js");
      return;
    case "token": {
      const { values } = parseArgs({ args, options: connectionOptions });
      process.stdout.write(`${await createClient(connection(values)).token()}\n`);
      return;
    }
    case "import":
      return importFile(args);
    case "export":
      return exportBooks(args);
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  const message =
    error instanceof UsageError
      ? `${error.message} (book-catalogue --help)`
      : error instanceof CatalogueError
        ? `the service answered ${error.status}: ${error.message}`
        : (error as { code?: string }).code === "ECONNREFUSED" ||
            (error as Error).message === "fetch failed"
          ? "cannot reach the service (is it running? --url)"
          : (error as Error).message;
  process.stderr.write(`book-catalogue: ${message}\n`);
  const unusable =
    error instanceof UsageError ||
    error instanceof FileError ||
    String((error as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS");
  process.exit(unusable ? 2 : 1);
}
