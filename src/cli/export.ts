import { parseArgs } from "node:util";
import { stringify as toCsvRow } from "csv-stringify/sync";
import { createClient } from "../client/client.js";
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
