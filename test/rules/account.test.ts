// One rule for an account's name: the check the page uses agrees with the schema the server
// validates POST /accounts against, whatever the name holds.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Ajv } from "ajv";
import fc from "fast-check";
import { newAccountSchema } from "../../src/accounts/schemas.js";
import { checkName, NAME_MAX } from "../../src/rules/account.js";

// As Fastify compiles route schemas here: no coercion of types.
const serverAccepts = new Ajv({ coerceTypes: false }).compile(newAccountSchema);
const accepted = (name: string) =>
  serverAccepts({ name, role: "reader", password: "twelve chars or more" });

test("the page's check of a name and the server's schema agree", () => {
  const names = fc.oneof(
    fc.string({ maxLength: NAME_MAX + 2 }),
    fc.string({ unit: "binary", maxLength: 8 }),
    fc.constantFrom(
      "ana",
      " ana",
      "ana ",
      "Ana Lima",
      "a\u200bna",
      "\u202eana",
      "李娜",
      "x".repeat(101),
    ),
  );
  fc.assert(
    fc.property(names, (name) => (checkName(name) === undefined) === accepted(name)),
    { numRuns: 2_000 },
  );
});

test("each refused name is told why", () => {
  assert.deepEqual(checkName(" "), { kind: "empty" });
  assert.deepEqual(checkName("é".repeat(NAME_MAX + 1)), { kind: "too-long", max: NAME_MAX });
  for (const name of [" ana", "ana ", "ana\u00a0", "\u3000ana"]) {
    assert.deepEqual(checkName(name), { kind: "spaces-at-ends" }, JSON.stringify(name));
  }
  for (const name of [
    "a\tna",
    "ana\u200b",
    "\u202eana",
    "a\u2028na",
    "a\u0000na",
    "a\ud800",
    "\u3164",
    "ana\u034f",
    "ana\ufe0f",
    "ana\u{e0100}",
    "\u2800",
  ]) {
    assert.deepEqual(checkName(name), { kind: "forbidden-character" }, JSON.stringify(name));
  }
  for (const name of ["Ana Lima", "José", "李娜", "o'Brien-2", "é".repeat(NAME_MAX)]) {
    assert.equal(checkName(name), undefined, name);
  }
});
