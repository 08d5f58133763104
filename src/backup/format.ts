// The backup file, the same from either store (docs/operations.md#the-backup-file): a header
// line of fixed width, then one JSON line per account (format 2 on) and one per book, each in
// id order. The header's checksum covers its other fields and every byte after it.
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { type Book, MAX_BOOK_ID } from "../rules/book.js";

export const BACKUP_FORMAT = "book-catalogue-backup";
/**
 * The format this build writes: 2 adds the accounts. It reads 1 too, whose restore leaves the
 * catalogue's accounts as they are.
 */
export const BACKUP_VERSION = 2;
const READ_VERSIONS: readonly number[] = [1, 2];
/** The most accounts a backup may hold: they are kept in memory while it is read. */
export const MAX_BACKUP_ACCOUNTS = 100_000;
/**
 * The header's width, its newline included. Fixed, so the header can be written last, once
 * the count and the checksum are known, over the blanks the file began with.
 */
export const HEADER_BYTES = 512;

/** The highest next id a backup may name: that of a catalogue which gave MAX_BOOK_ID. */
export const MAX_NEXT_ID = MAX_BOOK_ID + 1;

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: number;
  /** When the snapshot began (ISO 8601, UTC). */
  createdAt: string;
  books: number;
  /** How many accounts (format 2 on; a file of format 1 has none and says nothing of them). */
  accounts?: number;
  /** The id the next new book takes: above every id the catalogue ever gave. */
  nextId: number;
  /** The checksum of the other fields and every byte after the header (checksumOf). */
  sha256: string;
}

/**
 * The header's checksum, in hex: SHA-256 of its other fields as JSON, in the order above
 * (`accounts` from format 2 on), a newline, and the hex SHA-256 of every byte after the header.
 * A change to any field, any account or any book fails it.
 */
export function checksumOf(header: Omit<BackupHeader, "sha256">, linesSha256: string): string {
  const { format, version, createdAt, books, accounts, nextId } = header;
  const counts = version === 1 ? { books } : { books, accounts };
  const fields = JSON.stringify({ format, version, createdAt, ...counts, nextId });
  return createHash("sha256").update(`${fields}\n${linesSha256}`).digest("hex");
}

/** The file is not a complete, intact backup this build can read. */
export class BackupFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BackupFileError";
  }
}

export function encodeHeader(header: BackupHeader): Buffer {
  const json = JSON.stringify(header);
  if (json.length >= HEADER_BYTES) throw new Error("the backup header outgrew its width");
  return Buffer.from(`${json.padEnd(HEADER_BYTES - 1)}\n`);
}

/** A book's line: its four fields in a fixed order. */
export const encodeBook = (book: Book): string =>
  `${JSON.stringify({ id: book.id, title: book.title, author: book.author, year: book.year })}\n`;

/** The header the file's first HEADER_BYTES hold, or BackupFileError saying why not. */
export function decodeHeader(bytes: Buffer): BackupHeader {
  const notBackup = new BackupFileError("it is not a complete book catalogue backup");
  if (bytes.length < HEADER_BYTES || bytes[HEADER_BYTES - 1] !== 0x0a) throw notBackup;
  if (!isUtf8(bytes)) throw new BackupFileError("line 1 is not valid UTF-8: the file is damaged");
  let header: Partial<BackupHeader>;
  try {
    header = JSON.parse(bytes.subarray(0, HEADER_BYTES).toString("utf8"));
  } catch {
    throw notBackup;
  }
  if (header?.format !== BACKUP_FORMAT) throw notBackup;
  if (!READ_VERSIONS.includes(header.version as number)) {
    throw new BackupFileError(
      `it is a backup of format ${header.version}, which this build does not read (it reads ${READ_VERSIONS.join(" and ")})`,
    );
  }
  const wholeFrom = (value: unknown, min: number) =>
    Number.isSafeInteger(value) && (value as number) >= min;
  // A catalogue that gave the largest id has the next past it: that one, and none beyond.
  if (Number.isInteger(header.nextId) && (header.nextId as number) > MAX_NEXT_ID) {
    throw new BackupFileError(
      `its next id ${header.nextId} is past the largest id a book can have (${MAX_BOOK_ID})`,
    );
  }
  if (
    !wholeFrom(header.books, 0) ||
    (header.version === 1
      ? header.accounts !== undefined
      : !wholeFrom(header.accounts, 0) || (header.accounts as number) > MAX_BACKUP_ACCOUNTS) ||
    !(header.nextId === MAX_NEXT_ID || wholeFrom(header.nextId, 1)) ||
    typeof header.createdAt !== "string" ||
    !/^[0-9a-f]{64}$/.test(header.sha256 ?? "")
  ) {
    throw new BackupFileError("its header is damaged");
  }
  return header as BackupHeader;
}
