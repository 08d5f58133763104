// book-catalogue backup FILE: one consistent snapshot of the catalogue to a file, read from
// the store itself while the service goes on serving; --check FILE proves a file.
import { parseArgs } from "node:util";
import { BackupFileError, type BackupHeader } from "../backup/format.js";
import { checkBackup } from "../backup/read.js";
import { partialName, writeBackup } from "../backup/write.js";
import { describeDb } from "../config.js";
import { openBackupStore } from "../store/open.js";
import { databaseOptions, databaseTarget } from "./database.js";
import { UsageError, writeFailure } from "./errors.js";
import { removeOnInterrupt } from "./interrupt.js";
import { counted, progressBar } from "./progress.js";
import { printLine } from "./shown.js";

export async function backupCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...databaseOptions, check: { type: "boolean" } },
  });
  const [file] = positionals;
  if (file === undefined || positionals.length > 1) throw new UsageError("backup takes one FILE");
  if (values.check) {
    if (values.db !== undefined) throw new UsageError("backup --check reads only the file");
    const bar = progressBar();
    const check = () => checkBackup(file, (done, total) => bar(done, total, "checked"));
    const { header } = await readingBackup(file, check);
    printLine(
      `${file}: a complete backup of ${contents(header)} taken ${header.createdAt} (next id ${header.nextId}${olderFormat(header)})`,
    );
    return;
  }
  const target = databaseTarget(values);
  const store = await openBackupStore(target, "read");
  try {
    const bar = progressBar();
    const temporary = partialName(file);
    const stopWatching = removeOnInterrupt(temporary);
    const header = await writeBackup(
      store,
      file,
      (done, total) => bar(done, total, "written"),
      temporary,
    ).catch((error) => {
      throw writeFailure(file, error);
    });
    stopWatching();
    printLine(
      `backed up ${contents(header)} from ${describeDb(target)} to ${file} (next id ${header.nextId})`,
    );
  } finally {
    await store.close();
  }
}

/** "3 books and 2 accounts"; a file of format 1 says nothing of accounts, nor does this. */
export const contents = (header: BackupHeader) =>
  header.accounts === undefined
    ? counted(header.books, "book")
    : `${counted(header.books, "book")} and ${counted(header.accounts, "account")}`;

/** What a file of format 1 means for a restore, after its next id; nothing for a newer one. */
export const olderFormat = (header: BackupHeader) =>
  header.accounts === undefined
    ? "; format 1, without accounts: a restore leaves the catalogue's accounts as they are"
    : "";

/** Runs a read of the backup file; a file that is no backup, or none, says so by name. */
export async function readingBackup<T>(file: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof BackupFileError) {
      throw new Error(`${file} is not a usable backup: ${error.message}`);
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("E") && "path" in (error as object)) {
      throw new Error(`cannot read ${file}: ${(error as Error).message}`);
    }
    throw error;
  }
}
