// What the backup tests share: catalogues of either store in a folder or schema of their own,
// read back with plain SQL (not through the code under test), and the command line.

import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  checksumOf,
  encodeBook,
  encodeHeader,
} from "../../src/backup/format.js";
import type { Book } from "../../src/rules/book.js";
import { openStore } from "../../src/store/open.js";
import {
  DEFAULT_TEST_DATABASE_URL,
  freshPostgresSchema,
  storesUnderTest,
} from "../support/helpers.js";
import { pgConnect } from "../support/pg.js";

export const CLI = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "dist",
  "cli",
  "main.js",
);

export type StoreKind = "sqlite" | "postgres";

export interface Catalogue {
  kind: StoreKind;
  dbUrl: string;
  /** Every book, in id order, read with plain SQL. */
  books(): Promise<Book[]>;
  /** The id the store would give next, read with plain SQL. */
  nextId(): Promise<number>;
  dispose(): Promise<void>;
}

/** A new, empty catalogue of the kind: a file not yet made, or an empty schema. */
export async function newCatalogue(kind: StoreKind): Promise<Catalogue> {
  if (kind === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "books-backup-"));
    const path = join(dir, "books.db");
    const read = <T>(query: (db: DatabaseSync) => T): T => {
      const db = new DatabaseSync(path);
      try {
        return query(db);
      } finally {
        db.close();
      }
    };
    return {
      kind,
      dbUrl: `sqlite:${path}`,
      books: async () =>
        read((db) => db.prepare("SELECT id, title, author, year FROM books ORDER BY id").all()).map(
          (row) => ({ ...row }) as unknown as Book,
        ),
      nextId: async () =>
        read(
          (db) =>
            Number(
              db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'books'").get()?.seq ?? 0,
            ) + 1,
        ),
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = await freshPostgresSchema();
  const db = await pgConnect(schema.dbUrl);
  return {
    kind,
    dbUrl: schema.dbUrl,
    books: async () => db.sql<Book>`SELECT id, title, author, year FROM books ORDER BY id`,
    nextId: async () => {
      const [row] = await db.sql<{ last: number | null }>`
        SELECT pg_sequence_last_value(pg_get_serial_sequence('books', 'id')) AS last`;
      return Number(row?.last ?? 0) + 1;
    },
    dispose: async () => {
      await db.end();
      await schema.drop();
    },
  };
}

/** The store's address of a catalogue's DB_URL. */
export const storeAddress = (dbUrl: string) =>
  dbUrl.startsWith("sqlite:")
    ? ({ kind: "sqlite", path: dbUrl.slice("sqlite:".length) } as const)
    : ({ kind: "postgres", url: dbUrl } as const);

/**
 * Fills the catalogue through the store, as the service would: `count` books, then every
 * seventh and the last ten deleted, so ids have gaps and the highest id ever given is gone.
 */
export async function seed(catalogue: Catalogue, count: number): Promise<void> {
  const store = await openStore({ db: storeAddress(catalogue.dbUrl), pgPoolSize: 4 });
  try {
    const ids: number[] = [];
    for (let start = 0; start < count; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, count - start) }, (_, i) => {
        const n = start + i;
        return store.create({
          title: `${["The", "A", "Ünder", "東京"][n % 4]} book ${n} “${n % 97}”`,
          author: `Author ${n % 311}`,
          year: 1500 + (n % 520),
        });
      });
      ids.push(...(await Promise.all(batch)).map((book) => book.id));
    }
    ids.sort((a, b) => a - b);
    const doomed = [...ids.filter((_, i) => i % 7 === 3 && i < ids.length - 10), ...ids.slice(-10)];
    for (let i = 0; i < doomed.length; i += 200) {
      await Promise.all(doomed.slice(i, i + 200).map((id) => store.remove(id)));
    }
  } finally {
    await store.close();
  }
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The command line, to its end. */
export function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { PATH: process.env.PATH ?? "", ...env },
        maxBuffer: 16 * 1024 * 1024,
        timeout: 300_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The command line, to its end, and the most memory it held (its peak RSS, in bytes). */
export function cliWithPeak(
  args: string[],
): Promise<{ code: number; stderr: string; peak: number }> {
  // Printed by the process itself as it exits: what it held at most, not a sample.
  const peak = `process.on("exit", () => process.stderr.write("peak " + process.resourceUsage().maxRSS + "\\n"))`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [`--import=data:text/javascript,${encodeURIComponent(peak)}`, CLI, ...args],
      { env: { PATH: process.env.PATH ?? "" }, timeout: 120_000 },
      (error, _stdout, stderr) =>
        resolve({
          code: error ? Number(error.code ?? 1) : 0,
          stderr,
          peak: Number(/^peak (\d+)$/m.exec(stderr)?.[1] ?? Number.NaN) * 1024,
        }),
    );
  });
}

/** The command line, started: for a test that kills it midway. */
export function spawnCli(args: string[]) {
  return spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

export const postgresUrl = () => process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;

const stores = await storesUnderTest();
/** Why the store's tests are skipped (PostgreSQL unreachable, outside CI), or false. */
export const skipOf = (kind: StoreKind) =>
  stores.find((store) => store.name === kind)?.skip ?? false;

/** Resolves once `condition` holds, checked every `everyMs`, for 60 s at most. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * A backup file of `lines` (the bytes after the header: accounts' and books' lines, or anything
 * a test needs), sealed with a checksum that holds, as the backup command seals one.
 */
export function writeBackupBytes(
  path: string,
  lines: Buffer,
  fields: { books: number; nextId: number; accounts?: number },
): void {
  const header = {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    createdAt: new Date().toISOString(),
    books: fields.books,
    accounts: fields.accounts ?? 0,
    nextId: fields.nextId,
  } as const;
  const sha256 = checksumOf(header, createHash("sha256").update(lines).digest("hex"));
  writeFileSync(path, Buffer.concat([encodeHeader({ ...header, sha256 }), lines]));
}

/** A backup file of these books and next id, whatever they are, with a checksum that holds. */
export function writeBackupFile(path: string, books: readonly Book[], nextId: number): void {
  const lines = Buffer.from(books.map(encodeBook).join(""));
  writeBackupBytes(path, lines, { books: books.length, nextId });
}
