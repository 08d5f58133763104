import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { stringify as toCsvRow } from "csv-stringify/sync";
import { type Book, createClient } from "../client/client.js";
import { connection, connectionOptions } from "./connection.js";
import { UsageError } from "./errors.js";

/** book-catalogue export: every book, in id order, to standard output. */
export async function exportBooks(args: string[]) {
  const { values } = parseArgs({
    args,
    options: { ...connectionOptions, format: { type: "string" } },
  });
  const format = values.format ?? "json";
  if (format !== "json" && format !== "csv") throw new UsageError("--format is json or csv");
  const text = exportText(format, createClient(connection(values)).books());
  await writeToStdout(text);
}

/** The export, chunk by chunk: a JSON array, or CSV under its header line. */
async function* exportText(format: "json" | "csv", books: AsyncIterator<Book>) {
  // The first page before the first byte: a service that is down or refuses the credentials
  // then fails the command with nothing written.
  let next = await books.next();
  yield format === "csv" ? toCsvRow([["id", "title", "author", "year"]]) : "[";
  let first = true;
  while (!next.done) {
    const book = next.value;
    if (format === "csv") yield toCsvRow([[book.id, book.title, book.author, book.year]]);
    else yield `${first ? "\n" : ",\n"}${JSON.stringify(book)}`;
    first = false;
    next = await books.next();
  }
  if (format === "json") yield first ? "]\n" : "\n]\n";
}

/** To standard output; a failure to write is the command's failure, as any other. */
async function writeToStdout(text: AsyncIterable<string>) {
  await pipeline(Readable.from(text), process.stdout);
}
