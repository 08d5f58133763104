// POST /token and the token rules of section 5 and decisions.md, through app.inject.
import assert from "node:assert/strict";
import { createHmac, generateKeyPairSync } from "node:crypto";
import { type AddressInfo, createServer } from "node:net";
import { after, before, test } from "node:test";
import { createMemoryLoginLimiter } from "../../src/auth/login-limiter.js";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  call,
  TEST_PASSWORD,
  TEST_SECRET,
  TEST_USERNAME,
  tokenFor,
} from "../support/helpers.js";

const b64 = (value: unknown) =>
  Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

/** A token made by hand, so that every part of it can be wrong on purpose. */
function forge(
  header: unknown,
  payload: unknown,
  options: { secret?: string; hash?: string } = {},
): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const signature = createHmac(options.hash ?? "sha256", options.secret ?? TEST_SECRET)
    .update(input)
    .digest("base64url");
  return `${input}.${signature}`;
}

const inFuture = () => Math.floor(Date.now() / 1000) + 600;
const HS256 = { alg: "HS256", typ: "JWT" };

describe("POST /token", () => {
  let app: App;
  before(async () => {
    app = await buildTestApp();
  });
  after(() => app.close());

  test("200 Token generated successfully: an HS256 JWT whose only claim is exp = now + 900 s", async () => {
    const before = Math.floor(Date.now() / 1000);
    const answer = await call<{ token: string }>(app, "POST", "/token", {
      body: { username: TEST_USERNAME, password: TEST_PASSWORD },
    });
    const after = Math.floor(Date.now() / 1000);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, {
      status: 200,
      message: Messages.tokenGenerated,
      data: { token: answer.body.data?.token },
    });
    const [header, payload] = (answer.body.data?.token ?? "")
      .split(".")
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, "base64url").toString()));
    assert.deepEqual(header, { alg: "HS256", typ: "JWT" });
    assert.deepEqual(Object.keys(payload), ["exp"]);
    assert.ok(payload.exp >= before + 900 && payload.exp <= after + 900, `exp ${payload.exp}`);
  });

  const invalidLogins: [string, string][] = [
    ["malformed JSON", "{"],
    ["empty body", ""],
    ["array", "[]"],
    ["missing password", JSON.stringify({ username: TEST_USERNAME })],
    ["missing username", JSON.stringify({ password: TEST_PASSWORD })],
    ["numeric password", JSON.stringify({ username: TEST_USERNAME, password: 1234 })],
    ["null username", JSON.stringify({ username: null, password: TEST_PASSWORD })],
    ["__proto__ key", `{"username":"a","password":"b","__proto__":{"x":1}}`],
  ];
  for (const [why, payload] of invalidLogins) {
    test(`400 Invalid request payload: ${why}`, async () => {
      const answer = await call(app, "POST", "/token", { payload });
      assert.equal(answer.status, 400);
      assert.deepEqual(answer.body, {
        status: 400,
        message: Messages.invalidRequestPayload,
        data: null,
      });
    });
  }

  for (const [why, username, password] of [
    ["wrong password", TEST_USERNAME, "wrong"],
    ["wrong username", "someone", TEST_PASSWORD],
    ["both wrong", "someone", "wrong"],
    ["empty strings", "", ""],
    ["password with a prefix of the right one", TEST_USERNAME, TEST_PASSWORD.slice(0, 5)],
  ] as const) {
    test(`401 Invalid credentials: ${why}`, async () => {
      const answer = await call(app, "POST", "/token", {
        body: { username, password },
        remoteAddress: `10.0.0.${why.length}`,
      });
      assert.deepEqual(answer.body, {
        status: 401,
        message: Messages.invalidCredentials,
        data: null,
      });
    });
  }

  test("500 Could not generate token when signing fails", async () => {
    const failing = await buildTestApp({
      tokens: {
        issue: () => {
          throw new Error("signing key unavailable");
        },
        verify: () => false,
      },
    });
    const answer = await call(failing, "POST", "/token", {
      body: { username: TEST_USERNAME, password: TEST_PASSWORD },
    });
    await failing.close();
    assert.deepEqual(answer.body, { status: 500, message: Messages.tokenNotGenerated, data: null });
  });
});

describe("failed logins are limited per client", () => {
  test("past the limit: 429 Too many requests with Retry-After, even for the right password; other clients and book routes unaffected; allowed again after the window", async () => {
    let now = 1_000_000;
    const limiter = createMemoryLoginLimiter(3, 60, () => now);
    const app = await buildTestApp({ limiter });
    const good = { username: TEST_USERNAME, password: TEST_PASSWORD };
    const bad = { username: TEST_USERNAME, password: "guess" };
    const attacker = "203.0.113.7";
    const token = await tokenFor(app);

    for (let i = 0; i < 3; i++) {
      const answer = await call(app, "POST", "/token", { body: bad, remoteAddress: attacker });
      assert.equal(answer.status, 401);
    }
    for (const body of [bad, good]) {
      const answer = await call(app, "POST", "/token", { body, remoteAddress: attacker });
      assert.deepEqual(answer.body, { status: 429, message: Messages.tooManyRequests, data: null });
      assert.equal(answer.headers["retry-after"], "60");
    }
    now += 30_000;
    const later = await call(app, "POST", "/token", { body: good, remoteAddress: attacker });
    assert.equal(later.headers["retry-after"], "30");

    const other = await call(app, "POST", "/token", { body: good, remoteAddress: "198.51.100.1" });
    assert.equal(other.status, 200);
    const books = await call(app, "GET", "/books", { token, remoteAddress: attacker });
    assert.equal(books.status, 200);

    now += 30_000;
    const again = await call(app, "POST", "/token", { body: good, remoteAddress: attacker });
    assert.equal(again.status, 200);
    await app.close();
  });

  test("100 parallel wrong logins: 10 × 401 and 90 × 429", async () => {
    const app = await buildTestApp();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        call(app, "POST", "/token", {
          body: { username: TEST_USERNAME, password: `guess-${i}` },
          remoteAddress: "192.0.2.10",
        }),
      ),
    );
    await app.close();
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 401).length, 10);
    assert.equal(statuses.filter((status) => status === 429).length, 90);
  });

  // The client forges the left of X-Forwarded-For; the proxy (192.0.2.1) appends the address
  // it saw (203.0.113.9). Only that last entry may count.
  for (const trustProxy of ["192.0.2.1", "192.0.2.0/24, 10.9.9.9"]) {
    test(`TRUST_PROXY=${trustProxy}: a forged X-Forwarded-For does not escape the limit`, async () => {
      const app = await buildTestApp({ env: { TRUST_PROXY: trustProxy } });
      const statuses = [];
      for (let i = 0; i < 15; i++) {
        const answer = await call(app, "POST", "/token", {
          body: { username: TEST_USERNAME, password: "guess" },
          remoteAddress: "192.0.2.1",
          headers: { "x-forwarded-for": `10.0.0.${i}, 127.0.0.1, 203.0.113.9` },
        });
        statuses.push(answer.status);
      }
      await app.close();
      assert.deepEqual(statuses, [...Array(10).fill(401), ...Array(5).fill(429)]);
    });
  }

  test("the default limit is 10 failures a minute", async () => {
    const app = await buildTestApp();
    const bad = { username: TEST_USERNAME, password: "guess" };
    const statuses = [];
    for (let i = 0; i < 11; i++) {
      statuses.push(
        (await call(app, "POST", "/token", { body: bad, remoteAddress: "192.0.2.9" })).status,
      );
    }
    assert.deepEqual(statuses, [...Array(10).fill(401), 429]);
    await app.close();
  });
});

describe("tokens on book routes", () => {
  let app: App;
  let valid: string;
  before(async () => {
    app = await buildTestApp();
    valid = await tokenFor(app);
  });
  after(() => app.close());

  const books = (authorization: string | undefined) =>
    call(app, "GET", "/books", authorization === undefined ? {} : { token: authorization });

  test("the bare token is accepted, as specified", async () => {
    assert.equal((await books(valid)).status, 200);
  });

  test("`Bearer <token>` is accepted, the scheme in any case", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      assert.equal((await books(`${scheme} ${valid}`)).status, 200, scheme);
    }
  });

  for (const [why, header] of [
    ["absent", undefined],
    ["empty", ""],
    ["only whitespace", "   "],
    ["`Bearer ` and nothing after it", "Bearer "],
    ["`bearer` alone", "bearer"],
    ["`BEARER` and only whitespace after it", "BEARER \t  "],
    ["`bEaReR` between spaces", "  bEaReR  "],
  ] as const) {
    test(`401 Authorization token required: header ${why}`, async () => {
      const answer = await books(header);
      assert.deepEqual(answer.body, { status: 401, message: Messages.tokenRequired, data: null });
    });
  }

  test("HS384 and HS512 signed with the secret are accepted (the HMAC family)", async () => {
    const exp = inFuture();
    assert.equal(
      (await books(forge({ alg: "HS384", typ: "JWT" }, { exp }, { hash: "sha384" }))).status,
      200,
    );
    assert.equal(
      (await books(forge({ alg: "HS512", typ: "JWT" }, { exp }, { hash: "sha512" }))).status,
      200,
    );
  });

  test("a fractional exp or a missing typ are accepted", async () => {
    assert.equal((await books(forge(HS256, { exp: inFuture() + 0.5 }))).status, 200);
    assert.equal((await books(forge({ alg: "HS256" }, { exp: inFuture() }))).status, 200);
  });

  // A kid names an account (test/auth/accounts.test.ts): one that names none is refused.
  test("a kid that names no account is 401 Invalid token", async () => {
    for (const kid of ["k1", "1", "01", 7]) {
      const answer = await books(forge({ ...HS256, kid }, { exp: inFuture() }));
      assert.deepEqual(answer.body, { status: 401, message: Messages.invalidToken, data: null });
    }
  });

  const now = () => Math.floor(Date.now() / 1000);
  const withSignature = (token: string, signature: string) =>
    `${token.split(".").slice(0, 2).join(".")}.${signature}`;
  const flipMiddle = (token: string) => {
    const at = token.lastIndexOf(".") + 10;
    const flipped = token[at] === "A" ? "B" : "A";
    return `${token.slice(0, at)}${flipped}${token.slice(at + 1)}`;
  };
  const rsaPublicPem = generateKeyPairSync("rsa", { modulusLength: 2048 })
    .publicKey.export({ type: "spki", format: "pem" })
    .toString();
  const invalid: [string, () => string][] = [
    ...["none", "None", "NONE", "nOnE"].flatMap((alg): [string, () => string][] => [
      [`alg ${alg}, unsigned`, () => `${b64({ alg })}.${b64({ exp: inFuture() })}.`],
      [`alg ${alg}, signed`, () => forge({ alg }, { exp: inFuture() })],
    ]),
    ...["RS256", "ES256", "PS256", "EdDSA"].map((alg): [string, () => string] => [
      `alg ${alg}`,
      () => forge({ alg, typ: "JWT" }, { exp: inFuture() }),
    ]),
    [
      "HS256 keyed with an RSA public key's PEM text",
      () => forge(HS256, { exp: inFuture() }, { secret: rsaPublicPem }),
    ],
    ["alg hs256 in lower case", () => forge({ alg: "hs256" }, { exp: inFuture() })],
    ["alg empty", () => forge({ alg: "" }, { exp: inFuture() })],
    ["alg null", () => forge({ alg: null }, { exp: inFuture() })],
    ["alg an array", () => forge({ alg: ["HS256"] }, { exp: inFuture() })],
    ["alg missing", () => forge({ typ: "JWT" }, { exp: inFuture() })],
    [
      "signed with another secret",
      () => forge(HS256, { exp: inFuture() }, { secret: "x".repeat(40) }),
    ],
    ["signed with an empty secret", () => forge(HS256, { exp: inFuture() }, { secret: "" })],
    ["signed with a common secret", () => forge(HS256, { exp: inFuture() }, { secret: "secret" })],
    [
      "payload changed after signing",
      () => {
        const [h, , sig] = forge(HS256, { exp: inFuture() }).split(".");
        return `${h}.${b64({ exp: inFuture() + 1000 })}.${sig}`;
      },
    ],
    ["signature empty", () => withSignature(forge(HS256, { exp: inFuture() }), "")],
    ["signature truncated", () => forge(HS256, { exp: inFuture() }).slice(0, -2)],
    ["signature with one character flipped", () => flipMiddle(forge(HS256, { exp: inFuture() }))],
    ["exp missing", () => forge(HS256, {})],
    ["exp in the past", () => forge(HS256, { exp: now() - 1 })],
    ["exp now", () => forge(HS256, { exp: now() })],
    ["exp 0", () => forge(HS256, { exp: 0 })],
    ["exp negative", () => forge(HS256, { exp: -5 })],
    ["exp a string", () => forge(HS256, { exp: String(inFuture()) })],
    ["exp null", () => forge(HS256, { exp: null })],
    ["exp 1e400", () => forge(HS256, `{"exp":1e400}`)],
    ["nbf in the future", () => forge(HS256, { exp: inFuture(), nbf: inFuture() })],
    ["a crit header", () => forge({ ...HS256, crit: ["exp"] }, { exp: inFuture() })],
    ["header not a JSON object", () => forge(["HS256"], { exp: inFuture() })],
    ["payload not a JSON object", () => forge(HS256, [inFuture()])],
    ["payload not JSON", () => forge(HS256, "exp")],
    [
      "header with a byte-order mark",
      () => forge(`\uFEFF${JSON.stringify(HS256)}`, { exp: inFuture() }),
    ],
    [
      "payload with a byte-order mark",
      () => forge(HS256, `\uFEFF${JSON.stringify({ exp: inFuture() })}`),
    ],
    [
      "padded base64",
      () => {
        const [h, p, sig] = forge(HS256, { exp: inFuture() }).split(".");
        return `${h}==.${p}.${sig}`;
      },
    ],
    [
      "standard base64 characters",
      () => `${forge(HS256, { exp: inFuture() }).replace(/-/g, "+").replace(/_/g, "/")}+/`,
    ],
    ["one segment", () => b64({ exp: inFuture() })],
    ["two segments", () => forge(HS256, { exp: inFuture() }).split(".").slice(0, 2).join(".")],
    ["four segments", () => `${forge(HS256, { exp: inFuture() })}.AAAA`],
    ["five segments", () => `${forge(HS256, { exp: inFuture() })}.AAAA.AAAA`],
    ["10,000 dots", () => ".".repeat(10_000)],
    ["whitespace inside", () => forge(HS256, { exp: inFuture() }).replace(".", ". ")],
    ["over 8 KiB", () => forge(HS256, { exp: inFuture(), pad: "x".repeat(8 * 1024) })],
  ];
  for (const [why, make] of invalid) {
    test(`401 Invalid token: ${why}`, async () => {
      const started = performance.now();
      const answer = await books(make());
      assert.deepEqual(answer.body, { status: 401, message: Messages.invalidToken, data: null });
      assert.ok(performance.now() - started < 500, "answered quickly");
    });
  }

  test("kid, jku and x5u pointing at a local listener: 401, and the listener hears nothing", async () => {
    let connections = 0;
    const listener = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const address = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/keys.json`;
    try {
      for (const header of [
        { alg: "RS256", jku: address },
        { alg: "RS256", x5u: address },
        { alg: "HS256", kid: address, jku: address },
      ]) {
        const token = forge(header, { exp: inFuture() }, { secret: "attacker-key" });
        assert.equal((await books(token)).status, 401, JSON.stringify(header));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(connections, 0);
    } finally {
      listener.close();
    }
  });

  test("401 Invalid token for a signature with a changed last character that decodes alike", async () => {
    // The last base64url character of a 32-byte HMAC carries two unused bits; changing only
    // those is a second spelling of the same bytes, which strict base64url refuses.
    const token = forge(HS256, { exp: inFuture() });
    const last = token.at(-1) as string;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const twin = alphabet[alphabet.indexOf(last) ^ 1] as string;
    assert.equal(
      Buffer.from(token.split(".")[2] as string, "base64url").toString("hex"),
      Buffer.from(`${token.split(".")[2]?.slice(0, -1)}${twin}`, "base64url").toString("hex"),
    );
    assert.equal((await books(`${token.slice(0, -1)}${twin}`)).status, 401);
    assert.equal((await books(token)).status, 200);
  });

  test("a token accepted once is refused after its exp, though it was remembered", async () => {
    // At least a whole second ahead, wherever in the current second the clock is.
    const exp = Math.ceil(Date.now() / 1000) + 1;
    const token = forge(HS256, { exp });
    assert.equal((await books(token)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now() + 20));
    assert.deepEqual((await books(token)).body, {
      status: 401,
      message: Messages.invalidToken,
      data: null,
    });
  });

  test("the original token still works after every refused one", async () => {
    assert.equal((await books(valid)).status, 200);
  });
});
