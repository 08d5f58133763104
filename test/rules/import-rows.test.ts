// A file's rows as the command line and the page read them: each row at the line it starts on,
// in LF and CRLF files.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseBookFile } from "../../src/rules/import-rows.js";

/** A CSV file whose rows span several lines, with empty lines between, ending with `eol`. */
function multiLineFile(eol: string): string {
  return [
    "title,author,year", // 1
    `"A title${eol}on two lines",Writer,1901`, // 2-3
    "", // 4
    `"Über${eol}${eol}drei Zeilen",Schreiber,1902`, // 5-7
    "Plain,Writer,1903", // 8
    `"Без года${eol}(no year)",Писатель,`, // 9-10
    "", // 11
    "", // 12
    `Last,"An author${eol}on two lines",1904`, // 13-14
    "",
  ].join(eol);
}

for (const [name, eol] of [
  ["LF", "\n"],
  ["CRLF", "\r\n"],
] as const) {
  test(`${name}: each row is numbered with the line it starts on, whatever spans several lines`, () => {
    const lines = parseBookFile(multiLineFile(eol)).map((row) => [row.line, row.title]);
    assert.deepEqual(lines, [
      [2, `A title${eol}on two lines`],
      [5, `Über${eol}${eol}drei Zeilen`],
      [8, "Plain"],
      [9, `Без года${eol}(no year)`],
      [13, "Last"],
    ]);
  });

  test(`${name}: with a byte-order mark, the header is still line 1`, () => {
    const rows = parseBookFile(`\uFEFF${multiLineFile(eol)}`);
    assert.deepEqual(
      rows.map((row) => row.line),
      [2, 5, 8, 9, 13],
    );
    assert.equal(rows[0]?.title, `A title${eol}on two lines`);
  });
}
