// One rule for "is this a book": the check the command line and the page use agrees with the
// schema the server validates POST /book against, whatever the fields hold.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Ajv } from "ajv";
import fc from "fast-check";
import { newBookSchema } from "../../src/books/schemas.js";
import { AUTHOR_MAX, checkBook, TITLE_MAX } from "../../src/rules/book.js";

// As Fastify compiles route schemas here: no coercion of types.
const serverAccepts = new Ajv({ coerceTypes: false, allErrors: true }).compile(newBookSchema);

const text = (max: number) =>
  fc.oneof(
    fc.string({ maxLength: max + 2 }),
    fc.string({ unit: "binary", maxLength: 8 }),
    fc.constantFrom(
      "",
      " ",
      "\t\n",
      "a\u0000b",
      "\uD800",
      "\uDC00x",
      "é".repeat(max),
      "𝄞".repeat(max + 1),
    ),
    fc.jsonValue(),
  );
const year = fc.oneof(
  fc.integer({ min: -12_000, max: 12_000 }),
  fc.constantFrom(-9999, 9999, -10_000, 10_000, 1.5, Number.NaN, "1999", null),
  fc.double(),
);

test("checkBook accepts exactly the books the server's schema accepts", () => {
  fc.assert(
    fc.property(
      fc.record({ title: text(TITLE_MAX), author: text(AUTHOR_MAX), year }, { requiredKeys: [] }),
      (fields) => {
        const { book, problems } = checkBook(fields);
        assert.equal(book !== undefined, serverAccepts(fields), JSON.stringify(problems));
        if (book !== undefined) assert.equal(JSON.stringify(book), JSON.stringify(fields));
      },
    ),
    { numRuns: 3000 },
  );
});

test("checkBook names each field's problem", () => {
  assert.deepEqual(checkBook({ title: " ", author: "x".repeat(301), year: 10_000 }).problems, {
    title: { kind: "empty" },
    author: { kind: "too-long", max: 300, length: 301 },
    year: { kind: "not-a-year", min: -9999, max: 9999 },
  });
  assert.deepEqual(checkBook({ title: 1, author: "a\u0000" }).problems, {
    title: { kind: "not-text" },
    author: { kind: "forbidden-character" },
    year: { kind: "missing" },
  });
});
