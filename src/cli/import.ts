// book-catalogue import: a file's rows checked, duplicates skipped, the rest created in the
// file's order, refusals reported with their line. Ctrl-C stops it after the books on their
// way, with the summary of what went in.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CatalogueError, createClient } from "../client/client.js";
import {
  BookFileError,
  checkRow,
  duplicateFinder,
  parseBookFile,
  type RowFields,
  sameBookKey,
} from "../rules/import-rows.js";
import { connection, connectionOptions } from "./connection.js";
import { FileError, refusalText, UsageError } from "./errors.js";
import { stopOnInterrupt } from "./interrupt.js";
import { counted, progressBar } from "./progress.js";
import { printLine, shown } from "./shown.js";

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
  const title = row.title === undefined ? "" : ` (${shown(row.title)})`;
  return `line ${row.line}${title}: ${reason}`;
}

/** The import's progress: a bar on a terminal, a plain line every 1,000 rows otherwise. */
function progress(total: number, dryRun: boolean) {
  const bar = progressBar(1000);
  return (done: number, counts: Counts) =>
    bar(
      done,
      total,
      dryRun
        ? `checked, ${counts.rejected} refused`
        : `imported ${counts.imported}, ${counts.duplicates} duplicates skipped, ${counts.rejected} refused`,
    );
}

interface Counts {
  imported: number;
  duplicates: number;
  rejected: number;
}

export async function importFile(args: string[]) {
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
  // The catalogue's books before the import: a row equal to one of them, or to an earlier
  // row of the file, is a duplicate.
  const existing = new Set<string>();
  if (duplicates === "skip") {
    for await (const book of client.books()) existing.add(sameBookKey(book));
  }
  const isDuplicate = duplicateFinder(existing);
  const dryRun = values["dry-run"] === true;
  const counts: Counts = { imported: 0, duplicates: 0, rejected: refusals.length };
  const report = progress(rows.length, dryRun);
  let done = refusals.length;
  let next = 0;
  const interrupt = stopOnInterrupt();
  const importer = async () => {
    while (!interrupt.requested() && next < valid.length) {
      const row = valid[next++] as (typeof valid)[number];
      if (duplicates === "skip" && isDuplicate(sameBookKey(row.book))) {
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
              `the service refused it: ${refusalText(error)}`,
            ),
          });
        }
      }
      done += 1;
      report(done, counts);
    }
  };
  report(done, counts);
  try {
    await Promise.all(Array.from({ length: concurrency }, importer));
  } finally {
    interrupt.release();
  }
  refusals.sort((a, b) => a.line - b.line);
  for (const refusal of refusals) printLine(`refused ${refusal.text}`, process.stderr);
  const summary = { rows: rows.length, valid: valid.length, left: valid.length - next, dryRun };
  writeSummary(summary, counts, interrupt.requested());
}

/** The last line: what went in, was skipped and refused, and, after Ctrl-C, what was left. */
function writeSummary(
  rows: { rows: number; valid: number; left: number; dryRun: boolean },
  counts: Counts,
  interrupted: boolean,
) {
  const skipped = `${counted(counts.duplicates, "duplicate")} skipped`;
  const line = rows.dryRun
    ? `dry run: ${rows.valid - counts.duplicates - rows.left} of ${rows.rows} rows would be imported; ${skipped}; ${counts.rejected} refused`
    : `imported ${counts.imported} of ${rows.rows} rows; ${skipped}; ${counts.rejected} refused`;
  if (!interrupted) {
    process.stdout.write(`${line}\n`);
    if (counts.rejected > 0) process.exitCode = 1;
    return;
  }
  // A progress bar on a terminal ends its line only when complete.
  if (process.stderr.isTTY) process.stderr.write("\n");
  process.stdout.write(`interrupted: ${line}; ${counted(rows.left, "row")} left\n`);
  process.exitCode = 130;
}
