// Reading a backup file back: its header, then its books a page at a time, each line checked
// as it comes and the count and checksum at the end. Memory stays at a page, whatever the size.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { type Book, checkBook, MAX_BOOK_ID } from "../rules/book.js";
import { BACKUP_PAGE_SIZE } from "../store/backup.js";
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
 * The backup's books in pages, in id order. Throws BackupFileError, at the latest after the
 * last page, when a line is not a book, the ids do not rise, or the count or the checksum
 * is not the header's: a consumer that writes the pages must do so in a transaction.
 */
export async function* readBooks(path: string, header: BackupHeader): AsyncGenerator<Book[]> {
  const hash = createHash("sha256");
  const check = bookChecker(header);
  let rest: Buffer = Buffer.alloc(0);
  let page: Book[] = [];
  for await (const chunk of createReadStream(path, {
    start: HEADER_BYTES,
    highWaterMark: 1 << 20,
  })) {
    hash.update(chunk as Buffer);
    const bytes = rest.length === 0 ? (chunk as Buffer) : Buffer.concat([rest, chunk as Buffer]);
    let start = 0;
    for (let end = bytes.indexOf(0x0a); end !== -1; end = bytes.indexOf(0x0a, start)) {
      page.push(check(bytes.toString("utf8", start, end)));
      start = end + 1;
      if (page.length === BACKUP_PAGE_SIZE) {
        yield page;
        page = [];
      }
    }
    rest = bytes.subarray(start);
  }
  if (rest.length > 0) throw new BackupFileError("its last line is cut short");
  if (check.count() !== header.books) {
    throw new BackupFileError(
      `it holds ${check.count()} books, not the ${header.books} its header names`,
    );
  }
  if (checksumOf(header, hash.digest("hex")) !== header.sha256) {
    throw new BackupFileError("its checksum does not match: the file is damaged");
  }
  if (page.length > 0) yield page;
}

/** Checks each line in turn: a book, its id above the last one and below the next id. */
function bookChecker(header: BackupHeader) {
  let count = 0;
  let lastId = 0;
  const check = (line: string): Book => {
    count += 1;
    // Line 1 is the header.
    const damaged = (why: string) =>
      new BackupFileError(`line ${count + 1} ${why}: the file is damaged`);
    let fields: Partial<Book>;
    try {
      fields = JSON.parse(line);
    } catch {
      throw damaged("is not JSON");
    }
    const { id } = fields ?? {};
    const { book } = checkBook(fields ?? {});
    if (book === undefined) throw damaged("is not a book");
    if (Number.isInteger(id) && (id as number) > MAX_BOOK_ID) {
      throw new BackupFileError(
        `line ${count + 1} has the id ${id}, past the largest id a book can have (${MAX_BOOK_ID})`,
      );
    }
    if (!Number.isSafeInteger(id) || (id as number) <= lastId)
      throw damaged("has an id out of order");
    if ((id as number) >= header.nextId) {
      throw new BackupFileError(
        `its header's next id is not above the id of line ${count + 1}: the file is damaged`,
      );
    }
    lastId = id as number;
    return { id: lastId, ...book };
  };
  return Object.assign(check, { count: () => count });
}

/** Reads the whole file as a restore would, and returns its header when every check holds. */
export async function checkBackup(
  path: string,
  onProgress?: (done: number, total: number) => void,
): Promise<BackupHeader> {
  const header = await readHeader(path);
  let done = 0;
  for await (const page of readBooks(path, header)) {
    done += page.length;
    onProgress?.(done, header.books);
  }
  return header;
}
