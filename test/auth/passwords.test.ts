// Account passwords: scrypt with OWASP's parameters, kept with their parameters and salt.
import assert from "node:assert/strict";
import { test } from "node:test";
import { hashPassword, PASSWORD_COST, passwordsAt } from "../../src/auth/passwords.js";
import { describe } from "../support/describe.js";

const { verify } = passwordsAt(PASSWORD_COST);

describe("account passwords", () => {
  test("a hash names scrypt, its parameters and salt, and verifies only its password", async () => {
    const hash = await hashPassword("a long enough secret");
    assert.match(hash, /^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    assert.deepEqual(PASSWORD_COST, { ln: 17, r: 8, p: 1 });
    assert.notEqual(await hashPassword("a long enough secret"), hash, "a new salt each time");
    assert.equal(await verify("a long enough secret", hash), true);
    assert.equal(await verify("a long enough secreT", hash), false);
  });

  test("a hash made with other parameters still verifies with its own", async () => {
    const older = await hashPassword("kept from before", { ln: 10, r: 8, p: 1 });
    assert.match(older, /^\$scrypt\$ln=10,/);
    assert.equal(await verify("kept from before", older), true);
  });

  test("no hash, or one that cannot be read, is false after the same work", async () => {
    assert.equal(await verify("anything"), false);
    assert.equal(await verify("anything", "plain text"), false);
    assert.equal(await verify("anything", "$scrypt$ln=40,r=8,p=1$AAAA$AAAA"), false);
  });
});
