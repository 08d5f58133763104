// A file's rows as the command line and the page read them: each row at the line it starts on,
// in LF and CRLF files; the cells export neutralised come back exactly; a row that lacks only
// its year can be given one.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import type { Book } from "../../src/rules/book.js";
import {
  CSV_BOM,
  CSV_HEADER,
  csvLine,
  neutraliseCell,
  restoreCell,
} from "../../src/rules/book-csv.js";
import {
  checkRow,
  duplicateFinder,
  parseBookFile,
  sameBookKey,
} from "../../src/rules/import-rows.js";

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
    const rows = parseBookFile(`${CSV_BOM}${multiLineFile(eol)}`);
    assert.deepEqual(
      rows.map((row) => row.line),
      [2, 5, 8, 9, 13],
    );
    assert.equal(rows[0]?.title, `A title${eol}on two lines`);
  });
}

test("a row that lacks only its year can be given one; a row with more wrong is not", () => {
  const [noYear, alsoNoAuthor] = parseBookFile(
    "title,author,year\nDie Straße,Ann Petry,\nNo author,,\n",
  ).map(checkRow);
  assert.deepEqual(noYear, {
    line: 2,
    problems: ["the year is missing"],
    title: "Die Straße",
    needsYear: { title: "Die Straße", author: "Ann Petry" },
  });
  assert.equal(alsoNoAuthor?.needsYear, undefined);
  assert.deepEqual(alsoNoAuthor?.problems, ["the author is empty", "the year is missing"]);
});

test("a row that repeats an earlier row of the file is a duplicate, as one the catalogue holds is", () => {
  const rows = parseBookFile(
    [
      "title,author,year",
      "Dune,Frank Herbert,1965", // 2: new
      "DUNE,frank herbert,1965", // 3: line 2 again, case aside
      "Emma,Jane Austen,1815", // 4: in the catalogue
      "Dune,Frank Herbert,1966", // 5: another year, another book
      "Dune,Frank Herbert,1965", // 6: line 2 again
      "",
    ].join("\n"),
  ).map(checkRow);
  const catalogue = new Set([sameBookKey({ title: "Emma", author: "Jane Austen", year: 1815 })]);
  const isDuplicate = duplicateFinder(catalogue);
  assert.deepEqual(
    rows.map((row) => [row.line, row.book && isDuplicate(sameBookKey(row.book))]),
    [
      [2, false],
      [3, true],
      [4, true],
      [5, false],
      [6, true],
    ],
  );
});

const FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r"];

test("a cell a spreadsheet would run gets a leading ', and one starting ' before such a character one more", () => {
  for (const start of FORMULA_STARTS) {
    assert.equal(neutraliseCell(`${start}x`), `'${start}x`);
    assert.equal(neutraliseCell(`'${start}x`), `''${start}x`);
  }
  assert.equal(neutraliseCell('=HYPERLINK("http://x")'), `'=HYPERLINK("http://x")`);
  for (const safe of ["Dune", "'Tis Pity She's a Whore", "''", "x=1", " =x"]) {
    assert.equal(neutraliseCell(safe), safe);
  }
});

test("restoreCell undoes neutraliseCell exactly, for any text", () => {
  const text = fc.oneof(
    fc.string(),
    fc.tuple(fc.constantFrom("", "'", "''", ...FORMULA_STARTS), fc.string()).map(([a, b]) => a + b),
  );
  fc.assert(
    fc.property(text, (value) => {
      const neutral = neutraliseCell(value);
      assert.doesNotMatch(neutral, /^[=+\-@\t\r]/);
      assert.equal(restoreCell(neutral), value);
    }),
  );
});

test("a book exported as a CSV line is imported back the same, whatever its title starts or ends with", () => {
  const starts = ["", " ", "'", "''", ...FORMULA_STARTS, ...FORMULA_STARTS.map((s) => `'${s}`)];
  // Spaces at either end are the book's too: the API keeps them, and so does a CSV cell.
  const ends = ["", " ", "  ", "\u00a0", "\t", "\u2028"];
  const book = fc.record({
    id: fc.integer({ min: 1, max: 1e9 }),
    title: fc
      .tuple(fc.constantFrom(...starts), fc.string({ minLength: 1 }), fc.constantFrom(...ends))
      .map(([start, rest, end]) => start + rest + end)
      .filter((title) => title.trim().length > 0),
    author: fc.constantFrom(
      "-Anonymous",
      "@handle",
      "+plus",
      "Writer",
      "'Quoted",
      " Padded ",
      "\u00a0Nbsp",
    ),
    year: fc.integer({ min: -9999, max: 9999 }),
  });
  fc.assert(
    fc.property(fc.array(book, { minLength: 1, maxLength: 5 }), (books: Book[]) => {
      const file = `${CSV_BOM}${CSV_HEADER}${books.map(csvLine).join("")}`;
      const read = parseBookFile(file).map(checkRow);
      assert.deepEqual(
        read.map((row) => row.book),
        books.map(({ title, author, year }) => ({ title, author, year })),
      );
    }),
  );
});
