// book-catalogue restore FILE: a backup's books and accounts, with their ids, into an empty
// catalogue (or in place of its own with --replace), all or nothing, once the whole file has
// been checked.
import { parseArgs } from "node:util";
import { withTokensEnded } from "../backup/accounts.js";
import { checkBackup, readBooks } from "../backup/read.js";
import { describeDb } from "../config.js";
import { CatalogueNotEmptyError } from "../store/backup.js";
import { openBackupStore } from "../store/open.js";
import { contents, olderFormat, readingBackup } from "./backup.js";
import { databaseOptions, databaseTarget } from "./database.js";
import { UsageError } from "./errors.js";
import { progressBar } from "./progress.js";
import { printLine } from "./shown.js";

export async function restoreCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...databaseOptions, replace: { type: "boolean" } },
  });
  const [file] = positionals;
  if (file === undefined || positionals.length > 1) throw new UsageError("restore takes one FILE");
  const path: string = file;
  const target = databaseTarget(values);
  const where = describeDb(target);
  // Nothing is written before the whole file has proved itself.
  const checked = progressBar();
  const check = () => checkBackup(file, (done, total) => checked(done, total, "checked"));
  const { header, accounts } = await readingBackup(file, check);
  const store = await openBackupStore(target, "restore");
  let nextId: number;
  try {
    const bar = progressBar();
    async function* pages() {
      let done = 0;
      for await (const page of readBooks(path, header)) {
        yield page;
        done += page.length;
        bar(done, header.books, "restored");
      }
    }
    nextId = await readingBackup(file, () =>
      store.restore(
        pages(),
        header.nextId,
        values.replace === true,
        accounts && withTokensEnded(accounts),
      ),
    );
  } catch (error) {
    if (!(error instanceof CatalogueNotEmptyError)) throw error;
    const held = contents({ ...header, books: error.count, accounts: error.accounts || undefined });
    throw new Error(
      `the catalogue at ${where} already holds ${held}: restore into an empty catalogue, or add --replace to replace them`,
    );
  } finally {
    await store.close();
  }
  printLine(
    `restored ${contents(header)} from ${file} into ${where} (next id ${nextId}${olderFormat(header)})`,
  );
}
