// The large bench's seed (`npm run bench -- --books N`): a backup of generated books, which the
// command line must take as any other, checked and restored book for book.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { searchableBooks, writeGeneratedBackup } from "../../bench/catalogue.js";
import { cli } from "../backup/catalogues.js";

test("a backup of generated books passes --check and restores every book, in order", async () => {
  const dir = mkdtempSync(join(tmpdir(), "books-generated-"));
  try {
    const file = join(dir, "generated.backup");
    // Not a whole number of the backup's pages: the last is a short one.
    const header = await writeGeneratedBackup(file, 2_345, searchableBooks(1_000_000));
    assert.equal(header.books, 2_345);
    const check = await cli(["backup", "--check", file]);
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, /a complete backup of 2345 books/);
    const db = join(dir, "books.db");
    const restore = await cli(["restore", file, "--db", `sqlite:${db}`]);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stdout, /restored 2345 books .* \(next id 2346\)/);
    const read = new DatabaseSync(db, { readOnly: true });
    const rows = read.prepare("SELECT id, title, author, year FROM books ORDER BY id").all();
    read.close();
    const expected = [...searchableBooks(2_345)].map((book, i) => ({ id: i + 1, ...book }));
    assert.deepEqual(
      rows.map((row) => ({ ...row })),
      expected,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
