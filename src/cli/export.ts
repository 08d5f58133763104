import { rename, rm } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { type Book, createClient } from "../client/client.js";
import { createPrivateFile, temporaryName } from "../private-files.js";
import { CSV_BOM, CSV_HEADER, csvLine } from "../rules/book-csv.js";
import { connection, connectionOptions } from "./connection.js";
import { UsageError, writeFailure } from "./errors.js";
import { removeOnInterrupt } from "./interrupt.js";

/** book-catalogue export: every book, in id order, to standard output or to --output FILE. */
export async function exportBooks(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      ...connectionOptions,
      format: { type: "string" },
      output: { type: "string", short: "o" },
      "no-bom": { type: "boolean" },
    },
  });
  const format = values.format ?? "json";
  if (format !== "json" && format !== "csv") throw new UsageError("--format is json or csv");
  const bom = format === "csv" && values["no-bom"] !== true;
  const text = exportText(format, createClient(connection(values)).books(), bom);
  if (values.output === undefined) await writeToStdout(text);
  else await writeToFile(values.output, text);
}

/**
 * The export, chunk by chunk: a JSON array, or CSV under its header line (after a byte-order
 * mark unless --no-bom: Excel needs it to read UTF-8).
 */
async function* exportText(format: "json" | "csv", books: AsyncIterator<Book>, bom: boolean) {
  // The first page before the first byte: a service that is down or refuses the credentials
  // then fails the command with nothing written.
  let next = await books.next();
  yield format === "csv" ? `${bom ? CSV_BOM : ""}${CSV_HEADER}` : "[";
  let first = true;
  while (!next.done) {
    const book = next.value;
    if (format === "csv") yield csvLine(book);
    else yield `${first ? "\n" : ",\n"}${JSON.stringify(book)}`;
    first = false;
    next = await books.next();
  }
  if (format === "json") yield first ? "]\n" : "\n]\n";
}

/** To standard output. A reader that stops early (`export | head`) ends the export quietly. */
async function writeToStdout(text: AsyncIterable<string>) {
  try {
    await pipeline(Readable.from(text), process.stdout);
  } catch (error) {
    // EPIPE: the reader closed the pipe, having read what it wanted. Not a failure: no message
    // and status 0, so `set -o pipefail` scripts pass (Node ignores SIGPIPE, hence the error).
    if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
  }
}

/**
 * To FILE, all or nothing: a temporary file beside it takes the export and replaces FILE in one
 * rename once complete. On a failure it is removed, and FILE stays as it was.
 */
async function writeToFile(path: string, text: AsyncIterable<string>) {
  const temporary = temporaryName(path, "tmp");
  const stopWatching = removeOnInterrupt(temporary);
  try {
    // Created, never opened: a link planted beside FILE is not written through.
    const handle = await createPrivateFile(temporary);
    // flush: fsync before close, so the rename never publishes bytes not yet on disk.
    await pipeline(Readable.from(text), handle.createWriteStream({ flush: true }));
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw writeFailure(path, error);
  } finally {
    stopWatching();
  }
}
