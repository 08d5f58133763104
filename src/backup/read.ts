// Reading a backup file back: its header, its accounts, then its books a page at a time, each
// line checked as it comes and the counts and checksum at the end. Memory stays at a page of
// books (and the accounts), whatever the size.
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { type Book, checkBook, MAX_BOOK_ID } from "../rules/book.js";
import type { StoredAccount } from "../store/accounts.js";
import { BACKUP_PAGE_SIZE } from "../store/backup.js";
import { accountChecker } from "./accounts.js";
import {
  BackupFileError,
  type BackupHeader,
  checksumOf,
  decodeHeader,
  HEADER_BYTES,
} from "./format.js";

/** The file's header, or BackupFileError when it is not a backup this build reads. */
export async function readHeader(path: string): Promise<BackupHeader> {
  const handle = await open(path, "r");
  try {
    const bytes = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await handle.read(bytes, 0, HEADER_BYTES, 0);
    return decodeHeader(bytes.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/**
 * The longest line a book's may be, its newline left out: far above what the fields of a book
 * fill, each character escaped, and low enough that a line without end is refused at once.
 */
export const MAX_LINE_BYTES = 64 * 1024;

/**
 * The backup's books in pages, in id order; its accounts, checked as they come, are pushed to
 * `accounts` when given. Throws BackupFileError, at the latest after the last page, when a line
 * is not an account or a book, the ids do not rise, or a count or the checksum is not the
 * header's: a consumer that writes the pages must do so in a transaction.
 */
export async function* readBooks(
  path: string,
  header: BackupHeader,
  accounts: StoredAccount[] = [],
): AsyncGenerator<Book[]> {
  const hash = createHash("sha256");
  const check = lineChecker(header, accounts);
  const cut = lineCutter();
  let page: Book[] = [];
  for await (const chunk of createReadStream(path, {
    start: HEADER_BYTES,
    highWaterMark: 1 << 20,
  })) {
    hash.update(chunk as Buffer);
    for (const line of cut.lines(chunk as Buffer)) {
      const book = check(line);
      if (book !== undefined) page.push(book);
      if (page.length === BACKUP_PAGE_SIZE) {
        yield page;
        page = [];
      }
    }
  }
  if (cut.pending()) throw new BackupFileError("its last line is cut short");
  check.counts();
  if (checksumOf(header, hash.digest("hex")) !== header.sha256) {
    throw new BackupFileError("its checksum does not match: the file is damaged");
  }
  if (page.length > 0) yield page;
}

/**
 * Checks each line in turn: the header's count of accounts first (pushed to `accounts`), then
 * books (returned). `counts` then throws when either count is not the header's.
 */
function lineChecker(header: BackupHeader, accounts: StoredAccount[]) {
  const expected = header.accounts ?? 0;
  const checkAccount = accountChecker();
  const checkBook = bookChecker(header);
  // Line 1 is the header.
  let line = 1;
  const check = (bytes: Buffer): Book | undefined => {
    line += 1;
    const fields = parsed(bytes, line);
    if (line - 1 > expected) return checkBook(fields, line);
    accounts.push(checkAccount(fields, line));
    return undefined;
  };
  const counts = () => {
    const seen = Math.min(line - 1, expected);
    if (seen !== expected) {
      throw new BackupFileError(`it holds ${seen} of the ${expected} accounts its header names`);
    }
    if (checkBook.count() !== header.books) {
      throw new BackupFileError(
        `it holds ${checkBook.count()} books, not the ${header.books} its header names`,
      );
    }
  };
  return Object.assign(check, { counts });
}

/** A line's JSON, or BackupFileError naming the line. */
function parsed(bytes: Buffer, line: number): Record<string, unknown> {
  const damaged = (why: string) => new BackupFileError(`line ${line} ${why}: the file is damaged`);
  // Decoding would put U+FFFD in place of what is not UTF-8, and restore another text.
  if (!isUtf8(bytes)) throw damaged("is not valid UTF-8");
  try {
    return JSON.parse(bytes.toString("utf8")) ?? {};
  } catch {
    throw damaged("is not JSON");
  }
}

/**
 * Cuts the chunks read into lines. The bytes of a line not yet ended are kept apart and joined
 * once, when it ends; a line that grows past MAX_LINE_BYTES is refused as soon as it does, so
 * time and memory stay those of reading the file once, whatever its lines.
 */
function lineCutter() {
  let kept: Buffer[] = [];
  let keptBytes = 0;
  // Line 1 is the header.
  let line = 1;
  const grow = (bytes: number) => {
    keptBytes += bytes;
    if (keptBytes > MAX_LINE_BYTES) {
      throw new BackupFileError(
        `line ${line + 1} is longer than ${MAX_LINE_BYTES} bytes, more than a book's: the file is damaged`,
      );
    }
  };
  return {
    *lines(chunk: Buffer): Generator<Buffer> {
      let start = 0;
      for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
        const tail = chunk.subarray(start, end);
        grow(tail.length);
        yield kept.length === 0 ? tail : Buffer.concat([...kept, tail]);
        [kept, keptBytes, start] = [[], 0, end + 1];
        line += 1;
      }
      if (start < chunk.length) {
        grow(chunk.length - start);
        kept.push(chunk.subarray(start));
      }
    },
    pending: () => keptBytes > 0,
  };
}

/** Checks each book line in turn: a book, its id above the last one and below the next id. */
function bookChecker(header: BackupHeader) {
  let count = 0;
  let lastId = 0;
  const check = (fields: Partial<Book>, line: number): Book => {
    count += 1;
    const damaged = (why: string) =>
      new BackupFileError(`line ${line} ${why}: the file is damaged`);
    const { id } = fields;
    const { book } = checkBook(fields);
    if (book === undefined) throw damaged("is not a book");
    if (Number.isInteger(id) && (id as number) > MAX_BOOK_ID) {
      throw new BackupFileError(
        `line ${line} has the id ${id}, past the largest id a book can have (${MAX_BOOK_ID})`,
      );
    }
    if (!Number.isSafeInteger(id) || (id as number) <= lastId)
      throw damaged("has an id out of order");
    if ((id as number) >= header.nextId) {
      throw new BackupFileError(
        `its header's next id is not above the id of line ${line}: the file is damaged`,
      );
    }
    lastId = id as number;
    return { id: lastId, ...book };
  };
  return Object.assign(check, { count: () => count });
}

/** A backup proved whole: its header, and its accounts (undefined in a file of format 1). */
export interface CheckedBackup {
  header: BackupHeader;
  accounts: StoredAccount[] | undefined;
}

/** Reads the whole file as a restore would, and returns it when every check holds. */
export async function checkBackup(
  path: string,
  onProgress?: (done: number, total: number) => void,
): Promise<CheckedBackup> {
  const header = await readHeader(path);
  const accounts: StoredAccount[] = [];
  let done = 0;
  for await (const page of readBooks(path, header, accounts)) {
    done += page.length;
    onProgress?.(done, header.books);
  }
  return { header, accounts: header.accounts === undefined ? undefined : accounts };
}
