#!/usr/bin/env node
// book-catalogue: serve the catalogue, or script it through its API.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Ajv } from "ajv";
import { parse as parseCsv } from "csv-parse/sync";
import { stringify as toCsvRow } from "csv-stringify/sync";
import { newBookSchema } from "./books/book.js";
import { CatalogueError, createClient, type NewBook } from "./client.js";

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
  import: `Usage: book-catalogue import FILE [--dry-run] [--concurrency N] [connection options]

Adds the books of FILE: a JSON array of {title, author, year}, or a CSV file whose header
names title, author and year (Goodreads: Title, Author, and Original Publication Year or
Year Published). Ids in the file are ignored. Rows the service refuses are reported with
the reason, and then the command exits 1.

  --dry-run             Check every row, send nothing
  --concurrency N       Requests at once (default 8)`,
  export: `Usage: book-catalogue export [--format json|csv] [connection options]

Writes every book, in id order, to standard output: a JSON array (default) or CSV with
the header id,title,author,year.`,
} as const;

class UsageError extends Error {}

const validNewBook = new Ajv({ allErrors: false }).compile(newBookSchema);

interface Row {
  /** The row's number in the file: 1 for the first book. */
  line: number;
  book: NewBook | undefined;
  problem?: string;
}

const firstOf = (record: Record<string, string>, names: string[]) =>
  names.map((name) => record[name]?.trim()).find((value) => value !== undefined && value !== "");

/** The file's books, each with its row number, or why it is not one. */
function readRows(path: string): Row[] {
  const text = readFileSync(path, "utf8").replace(/^\uFEFF/, "");
  if (/^\s*\[/.test(text)) {
    const items = JSON.parse(text) as unknown[];
    return items.map((item, i) => {
      const { title, author, year } = (item ?? {}) as Record<string, unknown>;
      return checked(i + 1, { title, author, year } as NewBook);
    });
  }
  const records = parseCsv(text, {
    columns: true,
    skip_empty_lines: true,
    relax_column_count: true,
    // Goodreads writes ISBNs as ="0441013593", which strict CSV would refuse.
    relax_quotes: true,
  }) as Record<string, string>[];
  return records.map((record, i) => {
    const year = firstOf(record, ["year", "Year", "Original Publication Year", "Year Published"]);
    const book = {
      title: firstOf(record, ["title", "Title"]),
      author: firstOf(record, ["author", "Author"]),
      year: year !== undefined && /^-?\d+$/.test(year) ? Number(year) : year,
    };
    return checked(i + 1, book as NewBook);
  });
}

function checked(line: number, book: NewBook): Row {
  if (validNewBook(book)) return { line, book };
  const error = validNewBook.errors?.[0];
  const field = error?.instancePath.replace(/^\//, "") || error?.params?.missingProperty || "row";
  return { line, book: undefined, problem: `${field}: ${error?.message ?? "invalid"}` };
}

/** A progress bar on a terminal; a plain line every 1,000 rows otherwise. */
function progress(total: number) {
  const tty = process.stderr.isTTY;
  let last = 0;
  return (done: number, imported: number, rejected: number) => {
    if (tty) {
      const width = 30;
      const filled = Math.round((done / Math.max(total, 1)) * width);
      process.stderr.write(
        `\r[${"#".repeat(filled)}${" ".repeat(width - filled)}] ${done}/${total} imported ${imported}, rejected ${rejected}`,
      );
      if (done === total) process.stderr.write("\n");
    } else if (done - last >= 1000 || done === total) {
      last = done;
      process.stderr.write(
        `progress: ${done}/${total} imported ${imported}, rejected ${rejected}\n`,
      );
    }
  };
}

async function importFile(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...connectionOptions,
      "dry-run": { type: "boolean" },
      concurrency: { type: "string" },
    },
  });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError("import takes one FILE");
  const concurrency = Number(values.concurrency ?? 8);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new UsageError("--concurrency takes a whole number from 1 to 64");
  }
  let rows: Row[];
  try {
    rows = readRows(file);
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
  const rejected: Row[] = rows.filter((row) => row.book === undefined);
  const valid = rows.filter((row) => row.book !== undefined);
  const client = values["dry-run"] ? undefined : createClient(connection(values));
  if (client) await client.token();
  const report = progress(rows.length);
  let imported = 0;
  let done = rejected.length;
  let next = 0;
  const worker = async () => {
    while (next < valid.length) {
      const row = valid[next++] as Row;
      if (client) {
        try {
          await client.createBook(row.book as NewBook);
          imported += 1;
        } catch (error) {
          if (!(error instanceof CatalogueError) || error.status >= 500 || error.status === 401)
            throw error;
          rejected.push({ ...row, problem: error.message });
        }
      }
      done += 1;
      report(done, imported, rejected.length);
    }
  };
  report(done, imported, rejected.length);
  await Promise.all(Array.from({ length: concurrency }, worker));
  rejected.sort((a, b) => a.line - b.line);
  for (const row of rejected) process.stderr.write(`rejected row ${row.line}: ${row.problem}\n`);
  const verb = client ? "imported" : "would import (dry run)";
  process.stdout.write(
    `${verb} ${client ? imported : valid.length} of ${rows.length} rows; rejected ${rejected.length}\n`,
  );
  if (rejected.length > 0) process.exitCode = 1;
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
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
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
      await import("./server.js");
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
  process.exit(1);
}
