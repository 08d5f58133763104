// Accounts and roles through the API, on each store: logins with a `kid`, what each role may
// do, and how an account's tokens end.
import assert from "node:assert/strict";
import { createHmac, randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { untilTokensValid } from "../../src/auth/login.js";
import { createMemoryLoginLimiter } from "../../src/auth/login-limiter.js";
import { hashPassword, PASSWORD_COST, passwordsAt } from "../../src/auth/passwords.js";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import type { StoredAccount } from "../../src/store/accounts.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { describe } from "../support/describe.js";
import {
  type Answer,
  buildTestApp,
  call,
  type OpenedStore,
  storesUnderTest,
  TEST_PASSWORD,
  TEST_SECRET,
  TEST_USERNAME,
  tokenFor,
} from "../support/helpers.js";

const PASSWORD = "twelve chars or more";
const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };

const segment = (token: string, i: number) =>
  JSON.parse(Buffer.from(token.split(".")[i] as string, "base64url").toString());

async function login(app: App, username: string, password: string, remoteAddress = "192.0.2.1") {
  return call<{ token: string }>(app, "POST", "/token", {
    body: { username, password },
    remoteAddress,
  });
}

async function tokenOf(app: App, username: string, password = PASSWORD): Promise<string> {
  const answer = await login(app, username, password);
  assert.equal(answer.status, 200, answer.raw);
  return answer.body.data?.token as string;
}

function assertRefused(answer: Answer, status: number, message: string) {
  assert.deepEqual(answer.body, { status, message, data: null }, answer.raw);
  assert.equal(answer.status, status);
}

for (const kind of await storesUnderTest()) {
  describe(`accounts on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let app: App;
    let admin: string;
    const ids: Record<string, number> = {};
    const tokens: Record<string, string> = {};
    /** When each role's token was asked for, in Unix seconds. */
    const issued: Record<string, number> = {};
    before(async () => {
      opened = await kind.open();
      app = await buildTestApp({ store: opened.store });
      admin = await tokenFor(app);
      for (const role of ["reader", "librarian", "admin"]) {
        const name = `${role}-account`;
        const added = await call<{ id: number }>(app, "POST", "/accounts", {
          token: admin,
          body: { name, role, password: PASSWORD },
        });
        assert.equal(added.status, 201, added.raw);
        ids[role] = added.body.data?.id as number;
        issued[role] = Date.now() / 1000;
        tokens[role] = await tokenOf(app, name);
      }
    });
    after(async () => {
      await app?.close();
      await opened?.dispose();
    });

    test("an account's token is the contract's with its id in kid; the pair's has none", async () => {
      const token = tokens.reader as string;
      assert.deepEqual(segment(token, 0), { alg: "HS256", typ: "JWT", kid: String(ids.reader) });
      const claims = segment(token, 1);
      assert.deepEqual(Object.keys(claims), ["exp"]);
      const asked = issued.reader as number;
      assert.ok(claims.exp >= Math.floor(asked) + 900 && claims.exp < asked + 900 + 60, claims.exp);
      assert.deepEqual(segment(admin, 0), { alg: "HS256", typ: "JWT" });
      const me = await call(app, "GET", "/accounts/me", { token });
      assert.deepEqual(me.body.data, { id: ids.reader, name: "reader-account", role: "reader" });
      const pair = await call(app, "GET", "/accounts/me", { token: admin });
      assert.deepEqual(pair.body.data, { id: null, name: TEST_USERNAME, role: "admin" });
    });

    test("a kid changed to another account's id, the signature kept, is 401", async () => {
      const [, payload, signature] = (tokens.reader as string).split(".");
      const header = { alg: "HS256", typ: "JWT", kid: String(ids.admin) };
      const forged = `${Buffer.from(JSON.stringify(header)).toString("base64url")}.${payload}.${signature}`;
      assertRefused(
        await call(app, "GET", "/accounts", { token: forged }),
        401,
        Messages.invalidToken,
      );
      // Signed for it with the secret, the same header is the admin account's token: the kid
      // is under the signature, and only SECRET_TOKEN's holder can sign one.
      const input = forged.split(".").slice(0, 2).join(".");
      const signed = `${input}.${createHmac("sha256", TEST_SECRET).update(input).digest("base64url")}`;
      assert.equal((await call(app, "GET", "/accounts", { token: signed })).status, 200);
      const nobody = { alg: "HS256", typ: "JWT", kid: "999999" };
      const head = `${Buffer.from(JSON.stringify(nobody)).toString("base64url")}.${payload}`;
      const unknown = `${head}.${createHmac("sha256", TEST_SECRET).update(head).digest("base64url")}`;
      assertRefused(
        await call(app, "GET", "/books", { token: unknown }),
        401,
        Messages.invalidToken,
      );
    });

    test("each role against every route: allowed, or 403 Forbidden with nothing done", async () => {
      for (const [role, token] of Object.entries({ ...tokens, pair: admin })) {
        await everyRoute(app, token as string, role === "pair" ? "admin" : role);
      }
    });

    test("no token on an account route is 401 before the role is looked at", async () => {
      assertRefused(await call(app, "GET", "/accounts"), 401, Messages.tokenRequired);
      assertRefused(
        await call(app, "POST", "/accounts", { body: { name: "x" } }),
        401,
        Messages.tokenRequired,
      );
    });

    test("bad input is 400 Invalid input with its reason; no hash is ever answered", async () => {
      const cases: [unknown, RegExp][] = [
        [{ name: "short", role: "reader", password: "eleven char" }, /^password: at least 12/],
        [
          { name: "surrogates", role: "reader", password: "\ud800".repeat(12) },
          /^password: no unpaired surrogate/,
        ],
        [
          { name: "r", role: "owner", password: PASSWORD },
          /^role: one of reader, librarian, admin/,
        ],
        [{ name: " ", role: "reader", password: PASSWORD }, /^name: /],
        // Names that would look like another, or make a list read wrongly.
        ...[" ana", "ana ", "ana\u00a0", "a\tna", "ana\u200b", "\u202eana", "\u3164"].map(
          (name): [unknown, RegExp] => [
            { name, role: "reader", password: PASSWORD },
            /^name: no space at either end, no control or invisible character/,
          ],
        ),
        [{ name: TEST_USERNAME, role: "reader", password: PASSWORD }, /^name: the built-in/],
        [{ name: "reader-account", role: "reader", password: PASSWORD }, /^name: taken/],
      ];
      for (const [body, reason] of cases) {
        const answer = await call(app, "POST", "/accounts", { token: admin, body });
        assertRefused(answer, 400, Messages.invalidInput);
        assert.match(String(answer.headers["problem-reason"]), reason);
      }
      // Spaces inside, accents, and any script are names.
      for (const name of ["Ana Lima", "José", "李娜", "o'Brien-2"]) {
        const added = await call(app, "POST", "/accounts", {
          token: admin,
          body: { name, role: "reader", password: PASSWORD },
        });
        assert.equal(added.status, 201, `${name}: ${added.raw}`);
      }
      const patch = await call(app, "PATCH", `/accounts/${ids.reader}`, {
        token: admin,
        body: { enabled: "no" },
      });
      assertRefused(patch, 400, Messages.invalidInput);
      const list = await call(app, "GET", "/accounts", { token: admin });
      assert.doesNotMatch(list.raw, /scrypt|password/i);
      assertRefused(
        await call(app, "PATCH", "/accounts/012", { token: admin, body: {} }),
        404,
        Messages.accountNotFound,
      );
    });

    test("an account added disabled cannot log in until it is enabled", async () => {
      const added = await call<{ id: number; enabled: boolean }>(app, "POST", "/accounts", {
        token: admin,
        body: { name: "not-yet", role: "reader", password: PASSWORD, enabled: false },
      });
      assert.equal(added.status, 201, added.raw);
      assert.equal(added.body.data?.enabled, false);
      const id = added.body.data?.id as number;
      const listed = await call<{ id: number; enabled: boolean }[]>(app, "GET", "/accounts", {
        token: admin,
      });
      assert.equal(listed.body.data?.find((account) => account.id === id)?.enabled, false);
      assertRefused(await login(app, "not-yet", PASSWORD), 401, Messages.invalidCredentials);
      await patch(app, admin, id, { enabled: true });
      assert.equal(segment(await tokenOf(app, "not-yet"), 0).kid, String(id));
    });

    test("disabling an account ends its tokens at once; enabling does not revive them", async () => {
      const name = "leaver";
      const id = await add(app, admin, name, "librarian");
      const old = await tokenOf(app, name);
      assert.equal((await call(app, "GET", "/books", { token: old })).status, 200);
      await patch(app, admin, id, { enabled: false });
      assertRefused(await call(app, "GET", "/books", { token: old }), 401, Messages.invalidToken);
      assertRefused(await login(app, name, PASSWORD), 401, Messages.invalidCredentials);
      await patch(app, admin, id, { enabled: true });
      assertRefused(await call(app, "GET", "/books", { token: old }), 401, Messages.invalidToken);
      const fresh = await tokenOf(app, name);
      assert.equal((await call(app, "GET", "/books", { token: fresh })).status, 200);
    });

    test("a password reset ends the old tokens at once; the new password works at once", async () => {
      const name = "forgetful";
      const id = await add(app, admin, name, "reader");
      const old = await tokenOf(app, name);
      await patch(app, admin, id, { password: "a brand new password" });
      assertRefused(await call(app, "GET", "/books", { token: old }), 401, Messages.invalidToken);
      assertRefused(await login(app, name, PASSWORD), 401, Messages.invalidCredentials);
      const fresh = await tokenOf(app, name, "a brand new password");
      assert.equal((await call(app, "GET", "/books", { token: fresh })).status, 200);
    });

    test("an account changes its own password with its current one; the pair cannot", async () => {
      const name = "self-service";
      await add(app, admin, name, "reader");
      const old = await tokenOf(app, name);
      const wrong = await call(app, "PUT", "/accounts/me/password", {
        token: old,
        body: { current: "not the password", password: "another long password" },
      });
      assertRefused(wrong, 400, Messages.invalidInput);
      assert.match(String(wrong.headers["problem-reason"]), /^current: /);
      const changed = await call(app, "PUT", "/accounts/me/password", {
        token: old,
        body: { current: PASSWORD, password: "another long password" },
      });
      assert.deepEqual(changed.body, {
        status: 200,
        message: Messages.passwordChanged,
        data: null,
      });
      assertRefused(await call(app, "GET", "/books", { token: old }), 401, Messages.invalidToken);
      const fresh = await tokenOf(app, name, "another long password");
      assert.equal((await call(app, "GET", "/books", { token: fresh })).status, 200);
      const pair = await call(app, "PUT", "/accounts/me/password", {
        token: admin,
        body: { current: TEST_PASSWORD, password: "another long password" },
      });
      assertRefused(pair, 403, Messages.forbidden);
      assert.equal((await login(app, TEST_USERNAME, TEST_PASSWORD)).status, 200);
    });

    test("a removed account's tokens end; the built-in pair's name always wins", async () => {
      const id = await add(app, admin, "temporary", "reader");
      const old = await tokenOf(app, "temporary");
      const removed = await call(app, "DELETE", `/accounts/${id}`, { token: admin });
      assert.deepEqual(removed.body, { status: 200, message: Messages.accountDeleted, data: null });
      assertRefused(await call(app, "GET", "/books", { token: old }), 401, Messages.invalidToken);
      assertRefused(
        await call(app, "DELETE", `/accounts/${id}`, { token: admin }),
        404,
        Messages.accountNotFound,
      );
      const pair = await tokenOf(app, TEST_USERNAME, TEST_PASSWORD);
      assert.deepEqual(segment(pair, 0), { alg: "HS256", typ: "JWT" });
    });

    test("a name no account can have (a NUL in it) is a login like any unknown name", async () => {
      // PostgreSQL's text cannot hold a NUL: asked for such a name, it refused the statement.
      for (const username of ["reader-account\u0000", `${TEST_USERNAME}\u0000`, "\u0000"]) {
        const refused = await login(app, username, PASSWORD, "192.0.2.50");
        assertRefused(refused, 401, Messages.invalidCredentials);
      }
    });

    test("a login for an unknown name takes as long as a wrong password", async (t) => {
      // At a cost where one hash (some 80 ms here) dwarfs the rest of a login, with an account
      // whose hash was made at it: an eighth of the service's (passwordsAt checks an unknown
      // name at its own cost, whatever it is), so that 21 logins are not half a minute.
      const real = await buildTestApp({
        store: opened.store,
        passwords: passwordsAt({ ...PASSWORD_COST, ln: PASSWORD_COST.ln - 3 }),
      });
      t.after(() => real.close());
      await add(real, admin, "hashed-at-that-cost", "reader");
      // Each round times the three kinds of login back to back, so the machine's drift (it
      // moves by half within minutes) touches them alike; the ratios' medians are compared.
      const timed = async (username: string, i: number) => {
        const started = performance.now();
        const answer = await login(real, username, `wrong ${i}`, `198.51.100.${i}`);
        assert.equal(answer.status, 401);
        return performance.now() - started;
      };
      const toWrong: number[] = [];
      const toPair: number[] = [];
      for (let i = 0; i < 7; i++) {
        const unknown = await timed("nobody-by-this-name", i);
        toWrong.push(unknown / (await timed("hashed-at-that-cost", i)));
        toPair.push(unknown / (await timed(TEST_USERNAME, i)));
      }
      const median = (ratios: number[]) => ratios.sort((a, b) => a - b)[3] as number;
      t.diagnostic(
        `unknown over wrong password ${median(toWrong).toFixed(2)}, over the pair's ${median(toPair).toFixed(2)}`,
      );
      // One hash each. A login that skipped it would take a few ms, a ratio near 0.05; the
      // bounds leave room for a machine whose speed moves by half.
      for (const [what, ratios] of [
        ["wrong password", toWrong],
        ["the pair's name", toPair],
      ] as const) {
        const ratio = median(ratios);
        assert.ok(ratio > 0.4 && ratio < 2.5, `unknown over ${what}: ${ratios.join(", ")}`);
      }
    });
  });
}

async function add(app: App, admin: string, name: string, role: string): Promise<number> {
  const added = await call<{ id: number }>(app, "POST", "/accounts", {
    token: admin,
    body: { name, role, password: PASSWORD },
  });
  assert.equal(added.status, 201, added.raw);
  return added.body.data?.id as number;
}

async function patch(app: App, admin: string, id: number, body: object): Promise<void> {
  const answer = await call(app, "PATCH", `/accounts/${id}`, { token: admin, body });
  assert.equal(answer.status, 200, answer.raw);
}

/** Every route, for a token of `role`: what the role allows succeeds, the rest is 403. */
async function everyRoute(app: App, token: string, role: string): Promise<void> {
  const pair = await tokenFor(app);
  const book = (await call<{ id: number }>(app, "POST", "/book", { token: pair, body: DUNE })).body
    .data?.id;
  const victim = await add(app, pair, `victim-${role}-${randomUUID()}`, "reader");
  const state = async () =>
    JSON.stringify([
      (await call(app, "GET", "/books", { token: pair })).body.data,
      (await call(app, "GET", "/accounts", { token: pair })).body.data,
    ]);
  const routes: [string, string, object | undefined, string][] = [
    ["GET", "/books", undefined, "reader"],
    ["GET", `/book/${book}`, undefined, "reader"],
    ["GET", "/accounts/me", undefined, "reader"],
    ["POST", "/book", DUNE, "librarian"],
    ["PUT", `/book/${book}`, { year: 1966 }, "librarian"],
    ["DELETE", `/book/${book}`, undefined, "librarian"],
    ["GET", "/accounts", undefined, "admin"],
    ["POST", "/accounts", { name: `new-${victim}`, role: "reader", password: PASSWORD }, "admin"],
    ["PATCH", `/accounts/${victim}`, { role: "librarian" }, "admin"],
    ["DELETE", `/accounts/${victim}`, undefined, "admin"],
  ];
  const rank = ["reader", "librarian", "admin"];
  for (const [method, url, body, needs] of routes) {
    const before = await state();
    const answer = await call(app, method, url, { token, ...(body ? { body } : {}) });
    const allowed = rank.indexOf(role) >= rank.indexOf(needs);
    if (allowed) {
      assert.ok(answer.status < 300, `${role} ${method} ${url}: ${answer.raw}`);
    } else {
      assertRefused(answer, 403, Messages.forbidden);
      assert.equal(await state(), before, `${role} ${method} ${url} changed something`);
    }
  }
}

describe("failed logins are limited per account name too", () => {
  test("failures of one name from many clients make it 429; other names and the pair log in", async () => {
    const app = await buildTestApp({ limiter: createMemoryLoginLimiter(3, 60) });
    try {
      const admin = await tokenFor(app);
      for (const name of ["target", "bystander"]) await add(app, admin, name, "reader");
      for (let i = 0; i < 3; i++) {
        const answer = await login(app, "target", "wrong password", `203.0.113.${i}`);
        assert.equal(answer.status, 401);
      }
      const locked = await login(app, "target", PASSWORD, "203.0.113.99");
      assertRefused(locked, 429, Messages.tooManyRequests);
      assert.ok(Number(locked.headers["retry-after"]) > 50, "the name's window");
      assert.equal((await login(app, "bystander", PASSWORD, "203.0.113.99")).status, 200);
      for (let i = 0; i < 3; i++) {
        await login(app, TEST_USERNAME, "wrong password", `198.51.100.${i}`);
      }
      const pair = await login(app, TEST_USERNAME, TEST_PASSWORD, "198.51.100.99");
      assert.equal(pair.status, 200, "the pair's name is counted per client only");
    } finally {
      await app.close();
    }
  });
});

describe("the built-in pair always wins for its own name", () => {
  test("an account of that name (made in the store, say) cannot log in; the pair can", async () => {
    const store = openSqliteStore(":memory:");
    const passwordHash = await hashPassword(PASSWORD);
    await store.accounts?.create({
      name: TEST_USERNAME,
      role: "reader",
      passwordHash,
      tokensValidFrom: 0,
    });
    const app = await buildTestApp({ store });
    try {
      assertRefused(await login(app, TEST_USERNAME, PASSWORD), 401, Messages.invalidCredentials);
      const pair = await login(app, TEST_USERNAME, TEST_PASSWORD);
      assert.deepEqual(segment(pair.body.data?.token as string, 0), { alg: "HS256", typ: "JWT" });
    } finally {
      await app.close();
    }
  });
});

describe("a login just after its account's tokens ended", () => {
  test("waits until the clock reads the second they became valid, however the timer wakes", async (t) => {
    // A timer may wake before the wall clock says it is due (the two are different clocks, and
    // the wall clock may be stepped back): a token stamped then would carry the second before,
    // and be refused at once (401 on CI, Node 22). Here the clock reads 200 ms behind after
    // the wait is taken.
    const realNow = Date.now;
    const validFrom = Math.floor(realNow() / 1000) + 1;
    let calls = 0;
    t.mock.method(Date, "now", () => realNow() - (calls++ === 0 ? 0 : 200));
    await untilTokensValid({ tokensValidFrom: validFrom } as StoredAccount);
    assert.ok(Date.now() >= validFrom * 1000, `${validFrom * 1000 - Date.now()} ms early`);
  });
});
