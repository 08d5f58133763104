// book-catalogue import of a CSV file with one line without end: refused at once, by line,
// before any connection to the service.
import assert from "node:assert/strict";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cliWithPeak } from "../backup/catalogues.js";

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "books-import-lines-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("a CSV file with one line of 64 MiB is refused at once, naming the line", async () => {
  const file = join(dir, "endless.csv");
  const out = openSync(file, "w");
  writeSync(out, "title,author,year\nDune,Frank Herbert,1965\n");
  const mebibyte = Buffer.alloc(1 << 20, "a");
  for (let i = 0; i < 64; i++) writeSync(out, mebibyte);
  closeSync(out);
  // Refused before it connects: no service is needed, and none answers at this address.
  const args = ["import", file, "--dry-run", "--url", "http://127.0.0.1:9"];
  const started = Date.now();
  const refused = await cliWithPeak(args);
  const seconds = (Date.now() - started) / 1000;
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(
    refused.stderr,
    /has a line \(3\) longer than 1048576 characters, more than a book's row\n/,
  );
  // The file is read whole (as the page reads it): some three times its size at most, not
  // the parser's many times.
  assert.ok(
    refused.peak < 300 * 2 ** 20,
    `it held ${Math.round(refused.peak / 2 ** 20)} MiB at most`,
  );
  assert.ok(seconds < 20, `it took ${seconds} s`);
});
