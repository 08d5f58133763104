// The lines of a backup file as restore reads them: bytes that are not UTF-8 are refused, not
// restored as another text, and a line without end is refused at once, in little memory.
import assert from "node:assert/strict";
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { encodeBook } from "../../src/backup/format.js";
import { cli, cliWithPeak, writeBackupBytes } from "./catalogues.js";

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "books-backup-lines-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("a line that is not UTF-8 is refused by line, though its checksum holds; nothing is restored", async () => {
  const file = join(dir, "latin1.backup");
  const good = encodeBook({ id: 1, title: "Dune", author: "Frank Herbert", year: 1965 });
  // "Émile" as Latin-1: 0xC9 starts a character of two bytes that "m" does not continue.
  const latin1 = Buffer.from(
    '{"id":2,"title":"\xc9mile","author":"Jean-Jacques Rousseau","year":1762}\n',
    "latin1",
  );
  writeBackupBytes(file, Buffer.concat([Buffer.from(good), latin1]), { books: 2, nextId: 3 });
  const reason = "line 3 is not valid UTF-8: the file is damaged";
  const checked = await cli(["backup", "--check", file]);
  assert.equal(checked.code, 1);
  assert.equal(checked.stderr, `book-catalogue: ${file} is not a usable backup: ${reason}\n`);
  const db = join(dir, "latin1.db");
  const restore = await cli(["restore", file, "--db", `sqlite:${db}`]);
  assert.equal(restore.code, 1);
  assert.match(restore.stderr, new RegExp(`${reason}\\n$`));
  assert.ok(!existsSync(db), "no catalogue made");
});

test("one line of 128 MiB without a newline is refused at once, in little memory", async () => {
  const small = join(dir, "small.backup");
  const book = encodeBook({ id: 1, title: "Dune", author: "Frank Herbert", year: 1965 });
  writeBackupBytes(small, Buffer.from(book), { books: 1, nextId: 2 });
  const baseline = await cliWithPeak(["backup", "--check", small]);
  assert.equal(baseline.code, 0, baseline.stderr);

  // The header of a small backup, then one line without end, written a MiB at a time.
  const file = join(dir, "endless.backup");
  writeBackupBytes(file, Buffer.alloc(0), { books: 1, nextId: 2 });
  const out = openSync(file, "a");
  const mebibyte = Buffer.alloc(1 << 20, "a");
  for (let i = 0; i < 128; i++) writeSync(out, mebibyte);
  closeSync(out);

  const started = Date.now();
  const refused = await cliWithPeak(["backup", "--check", file]);
  const seconds = (Date.now() - started) / 1000;
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /is not a usable backup: line 2 is longer than 65536 bytes, more than a book's: the file is damaged\n/,
  );
  const grew = refused.peak - baseline.peak;
  assert.ok(
    grew < 100 * 2 ** 20,
    `it held ${Math.round(grew / 2 ** 20)} MiB more than for a small file`,
  );
  // Bounded generously for a busy machine: reading it once takes well under a second.
  assert.ok(seconds < 20, `it took ${seconds} s`);
});
