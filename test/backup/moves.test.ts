// A catalogue of 50,000 books moved between the stores, each of the four ways, ids kept;
// and a backup and a restore killed with SIGKILL midway, which must leave nothing behind.

import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import { numberedBooks, writeGeneratedBackup } from "../../bench/catalogue.js";
import type { Book } from "../../src/rules/book.js";
import { openStore } from "../../src/store/open.js";
import { describe } from "../support/describe.js";
import { pgConnect } from "../support/pg.js";
import {
  type Catalogue,
  cli,
  newCatalogue,
  type StoreKind,
  seed,
  skipOf,
  spawnCli,
  until,
} from "./catalogues.js";

const BOOKS = 50_000;
/** A restore killed midway restores this many generated books: seconds of writing, not one. */
const KILLED_RESTORE_BOOKS = 200_000;
const HEADER_BYTES = 512;

/** The header and the bytes after it: two backups of the same books have the same bytes. */
function readBackup(file: string) {
  const bytes = readFileSync(file);
  return {
    header: JSON.parse(bytes.subarray(0, HEADER_BYTES).toString()) as {
      books: number;
      nextId: number;
    },
    body: bytes.subarray(HEADER_BYTES),
  };
}

const booksOf = (file: string): Book[] =>
  readBackup(file)
    .body.toString()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));

describe(`${BOOKS} books between the stores`, { skip: skipOf("postgres") }, () => {
  let dir: string;
  const catalogues: Catalogue[] = [];
  const catalogue = async (kind: StoreKind) => {
    const made = await newCatalogue(kind);
    catalogues.push(made);
    return made;
  };
  /** Backs the catalogue up to a new file; its name. */
  const backUp = async (from: Catalogue, name: string) => {
    const file = join(dir, name);
    const run = await cli(["backup", file, "--db", from.dbUrl]);
    assert.equal(run.code, 0, run.stderr);
    return file;
  };
  /** Restores the file into a new catalogue of the kind, and proves it holds the file's books. */
  const move = async (file: string, kind: StoreKind) => {
    const target = await catalogue(kind);
    const run = await cli(["restore", file, "--db", target.dbUrl]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(await target.books(), booksOf(file));
    assert.equal(await target.nextId(), readBackup(file).header.nextId);
    // Backed up again, the same books to the byte, and the same next id.
    const again = readBackup(await backUp(target, `${kind}-from-${file.split("/").at(-1)}`));
    const original = readBackup(file);
    assert.ok(again.body.equals(original.body), "the same books, ids and all");
    assert.equal(again.header.nextId, original.header.nextId);
    return target;
  };
  let fromSqlite: string;
  let fromPostgres: string;
  let large: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "books-moves-"));
    const sqlite = await catalogue("sqlite");
    await seed(sqlite, BOOKS);
    fromSqlite = await backUp(sqlite, "sqlite.backup");
    // A PostgreSQL catalogue with a history of its own: moved in, then written to.
    const pg = await move(fromSqlite, "postgres");
    await seed(pg, 1000);
    fromPostgres = await backUp(pg, "postgres.backup");
    assert.ok(readBackup(fromPostgres).header.books > readBackup(fromSqlite).header.books);
    large = join(dir, "large.backup");
    await writeGeneratedBackup(large, KILLED_RESTORE_BOOKS, numberedBooks(KILLED_RESTORE_BOOKS));
  });
  after(async () => {
    for (const made of catalogues) await made.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test("SQLite to SQLite", async () => {
    await move(fromSqlite, "sqlite");
  });
  test("SQLite to PostgreSQL", async () => {
    await move(fromSqlite, "postgres");
  });
  test("PostgreSQL to SQLite", async () => {
    await move(fromPostgres, "sqlite");
  });
  test("PostgreSQL to PostgreSQL", async () => {
    await move(fromPostgres, "postgres");
  });

  test("Ctrl-C during a backup removes its temporary file", async () => {
    const source = await catalogue("sqlite");
    assert.equal((await cli(["restore", fromSqlite, "--db", source.dbUrl])).code, 0);
    const out = mkdtempSync(join(dir, "interrupted-"));
    const child = spawnCli(["backup", join(out, "b.backup"), "--db", source.dbUrl]);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await until(
      () => readdirSync(out).some((name) => statSync(join(out, name)).size > HEADER_BYTES),
      2,
    );
    child.kill("SIGINT");
    assert.equal(await exited, 130);
    assert.deepEqual(readdirSync(out), []);
  });

  for (const kind of ["sqlite", "postgres"] as const) {
    test(`a backup of ${kind} killed midway leaves no file that passes --check`, async () => {
      const source = await catalogue(kind);
      assert.equal((await cli(["restore", fromSqlite, "--db", source.dbUrl])).code, 0);
      const out = mkdtempSync(join(dir, "killed-"));
      const file = join(out, "nightly.backup");
      // Last night's backup, which a failed run must leave as it is.
      const previous = await backUp(source, "previous.backup");
      copyFileSync(previous, file);
      const child = spawnCli(["backup", file, "--db", source.dbUrl]);
      const exited = new Promise((resolve) => child.once("exit", resolve));
      // Killed once the books have begun to reach the disk.
      const growing = () =>
        readdirSync(out).some(
          (name) =>
            name !== "nightly.backup" && statSync(join(out, name)).size > HEADER_BYTES + 100_000,
        );
      await until(growing, 2);
      child.kill("SIGKILL");
      assert.equal(await exited, null, "killed before it finished");
      assert.ok(
        readFileSync(file).equals(readFileSync(previous)),
        "the backup's name still holds the previous one",
      );
      assert.equal((await cli(["backup", "--check", file])).code, 0);
      const left = readdirSync(out).filter((name) => name !== "nightly.backup");
      assert.equal(left.length, 1, "the temporary file a kill leaves");
      const check = await cli(["backup", "--check", join(out, left[0] as string)]);
      assert.equal(check.code, 1);
      assert.match(
        check.stderr,
        /is not a usable backup: it is not a complete book catalogue backup\n$/,
      );
    });

    test(`a restore into ${kind} killed midway leaves the catalogue as it was`, async () => {
      const target = await catalogue(kind);
      await seed(target, 50);
      const books = await target.books();
      const nextId = await target.nextId();
      const child = spawnCli(["restore", large, "--db", target.dbUrl, "--replace"]);
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await until(() => writing(target), 2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      child.kill("SIGKILL");
      assert.equal(await exited, null, "killed before it finished");
      assert.deepEqual(await target.books(), books);
      assert.equal(await target.nextId(), nextId);
      // And the store opens and serves as before.
      const db =
        kind === "sqlite" ? { kind, path: target.dbUrl.slice(7) } : { kind, url: target.dbUrl };
      const store = await openStore({ db, pgPoolSize: 1 } as Parameters<typeof openStore>[0]);
      try {
        assert.equal(
          (await store.create({ title: "After", author: "Someone", year: 2026 })).id,
          nextId,
        );
      } finally {
        await store.close();
      }
    });
  }
});

/** Whether a restore holds the catalogue's write lock: it is writing books. */
async function writing(target: Catalogue): Promise<boolean> {
  if (target.kind === "sqlite") {
    const db = new DatabaseSync(target.dbUrl.slice("sqlite:".length));
    try {
      db.exec("BEGIN IMMEDIATE");
      db.exec("ROLLBACK");
      return false;
    } catch {
      return true;
    } finally {
      db.close();
    }
  }
  const db = await pgConnect(target.dbUrl);
  try {
    const [row] = await db.sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE application_name = 'book-catalogue restore' AND query LIKE 'INSERT%'`;
    return (row?.n ?? 0) > 0;
  } finally {
    await db.end();
  }
}
