// book-catalogue accounts …, as an administrator runs it (the built dist/cli/main.js) against
// the built service: the new password piped or typed unseen, never in argv. The command speaks
// only to the API, whose account routes are tested on each store (test/auth/accounts.test.ts),
// so it runs against one, a SQLite file: each of its runs pays a password hash at the
// service's cost (the built-in pair's login once accounts exist), a second or more apiece.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CatalogueError, createClient } from "../../src/client/client.js";
import { describe } from "../support/describe.js";
import { type Service, startService } from "../support/service.js";

const CLI = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "cli", "main.js");
const ADMIN_ENV = { AUTH_USERNAME: "head", AUTH_PASSWORD: "cli-accounts-admin-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  ...ADMIN_ENV,
  SECRET_TOKEN: "cli-accounts-secret-of-at-least-32-bytes",
};
const PASSWORD = "a password of some length";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The command with `input` on standard input (a pipe); never rejects. */
function run(args: string[], input = "", env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH ?? "", ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

/** Whether `name` signs in with `password`. */
async function signsIn(service: Service, name: string, password: string): Promise<boolean> {
  try {
    await createClient({ baseUrl: service.url, username: name, password }).token();
    return true;
  } catch (error) {
    if (error instanceof CatalogueError && error.status === 401) return false;
    throw error;
  }
}

describe("book-catalogue accounts", () => {
  let service: Service;
  let dbPath: string;
  let cleanUp: () => Promise<void>;
  const as = (args: string[], input?: string) =>
    run([...args, "--url", service.url], input, ADMIN_ENV);
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-cli-accounts-"));
    dbPath = join(dir, "books.db");
    service = await startService({ ...ENV, DB_URL: `sqlite:${dbPath}` }, { direct: true });
    cleanUp = async () => {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  });
  after(() => cleanUp?.());

  test("add with a piped password, then list: the account signs in, no hash shown", async () => {
    assert.deepEqual(await as(["accounts", "list"]), {
      code: 0,
      stdout: "no accounts (the built-in pair signs in as ever)\n",
      stderr: "",
    });
    const added = await as(["accounts", "add", "ada", "--role", "librarian"], `${PASSWORD}\n`);
    assert.deepEqual(added, { code: 0, stdout: "added ada, librarian\n", stderr: "" });
    const listed = await as(["accounts", "list"]);
    assert.equal(listed.stdout, "NAME  ROLE       STATUS\nada   librarian  enabled\n");
    assert.doesNotMatch(listed.stdout + added.stdout, /scrypt|\$/);
    assert.equal(await signsIn(service, "ada", PASSWORD), true);
  });

  test("a taken name, the built-in pair's name, a short password and a bad role", async () => {
    const taken = await as(["accounts", "add", "ada", "--role", "reader"], `${PASSWORD}\n`);
    assert.equal(taken.code, 1);
    assert.equal(taken.stderr, 'book-catalogue: the name "ada" is taken by another account\n');
    const builtIn = await as(["accounts", "add", "head", "--role", "reader"], `${PASSWORD}\n`);
    assert.equal(builtIn.code, 1);
    assert.match(builtIn.stderr, /"head" is the built-in pair's name/);
    const short = await as(["accounts", "add", "bob", "--role", "reader"], "eleven char\n");
    assert.deepEqual(short, {
      code: 2,
      stdout: "",
      stderr: "book-catalogue: the password has 11 characters: at least 12\n",
    });
    // Twelve UTF-16 units, six characters: counted as the service counts them.
    const emoji = await as(["accounts", "add", "bob", "--role", "reader"], "😀".repeat(6));
    assert.equal(emoji.code, 2);
    assert.match(emoji.stderr, /the password has 6 characters: at least 12/);
    // A name the service would refuse is said before a password is read: none is piped here.
    const spaced = await as(["accounts", "add", " bob", "--role", "reader"], "");
    assert.deepEqual(spaced, {
      code: 2,
      stdout: "",
      stderr: 'book-catalogue: the name " bob" begins or ends with a space: nothing was changed\n',
    });
    // What it refuses is shown, not played: a right-to-left override is written out.
    const turned = await as(["accounts", "add", "a\u202eb\u0085c", "--role", "reader"], "");
    assert.equal(turned.code, 2);
    assert.match(turned.stderr, /the name "a\\u\{202e\}b\\u\{85\}c" holds a control/);
    assert.doesNotMatch(turned.stderr, /[\u202e\u0085]/);
    const none = await as(["accounts", "add", "bob", "--role", "reader"], "");
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no password on standard input/);
    for (const args of [
      ["accounts", "add", "bob", "--role", "boss"],
      ["accounts", "role", "ada", "boss"],
    ]) {
      const wrong = await as(args, `${PASSWORD}\n`);
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /"boss" is not a role: reader, librarian, admin/);
    }
    const missing = await as(["accounts", "add", "bob"], `${PASSWORD}\n`);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /accounts add needs --role ROLE/);
    assert.doesNotMatch((await as(["accounts", "list"])).stdout, /bob/);
  });

  test("an unknown account, for every command that names one", async () => {
    for (const args of [
      ["role", "nobody", "reader"],
      ["password", "nobody"],
      ["disable", "nobody"],
      ["enable", "nobody"],
      ["remove", "nobody"],
    ]) {
      const answer = await as(["accounts", ...args], `${PASSWORD}\n`);
      assert.deepEqual(answer, {
        code: 1,
        stdout: "",
        stderr: 'book-catalogue: there is no account named "nobody" (accounts list)\n',
      });
    }
  });

  test("role, password, disable, enable and remove", async () => {
    await as(["accounts", "add", "cy", "--role", "reader"], `${PASSWORD}\n`);
    assert.equal((await as(["accounts", "role", "cy", "admin"])).stdout, "cy is now admin\n");
    const cy = createClient({ baseUrl: service.url, username: "cy", password: PASSWORD });
    assert.equal((await cy.signedIn()).role, "admin");
    const token = await cy.token();
    const stale = createClient({ baseUrl: service.url, token });

    const reset = await as(["accounts", "password", "cy"], "another long password\r\n");
    assert.deepEqual(reset, {
      code: 0,
      stdout: "cy's password is reset: their tokens have ended\n",
      stderr: "",
    });
    await assert.rejects(stale.signedIn(), { status: 401 });
    assert.equal(await signsIn(service, "cy", PASSWORD), false);
    assert.equal(await signsIn(service, "cy", "another long password"), true);

    assert.match((await as(["accounts", "disable", "cy"])).stdout, /^disabled cy: /);
    assert.equal(await signsIn(service, "cy", "another long password"), false);
    assert.match((await as(["accounts", "list"])).stdout, /^cy +admin +disabled$/m);
    assert.equal((await as(["accounts", "enable", "cy"])).stdout, "enabled cy\n");
    assert.equal(await signsIn(service, "cy", "another long password"), true);
    assert.equal((await as(["accounts", "remove", "cy"])).stdout, "removed cy\n");
    assert.doesNotMatch((await as(["accounts", "list"])).stdout, /cy/);
  });

  test("a name kept from before the rule: listed quoted, said with its invisible characters written out", async () => {
    // As a catalogue made before names were checked, or a backup of one, may hold.
    const db = new DatabaseSync(dbPath);
    try {
      const insert = db.prepare(
        "INSERT INTO accounts (name, role, password_hash, tokens_valid_from) VALUES (?, ?, '$scrypt$x', 0)",
      );
      insert.run("old\u001b[2Jname\u202e", "reader");
      insert.run("plain", "librarian");
    } finally {
      db.close();
    }
    const listed = await as(["accounts", "list"]);
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.split("\n");
    const old = lines.find((line) => line.startsWith('"old'));
    assert.match(old ?? "", /^"old\\u001b\[2Jname\\u\{202e\}" +reader +enabled$/);
    for (const played of ["\u001b", "\u202e"]) assert.ok(!listed.stdout.includes(played));
    // Then every name is quoted (none looks like another), its role in the same column.
    const plain = lines.find((line) => line.startsWith('"plain" '));
    assert.equal(plain?.indexOf("librarian"), old?.indexOf("reader"), listed.stdout);
    // What the other commands say of it is written out too.
    const disabled = await as(["accounts", "disable", "old\u001b[2Jname\u202e"]);
    assert.equal(
      disabled.stdout,
      "disabled old\\u{1b}[2Jname\\u{202e}: their tokens have ended\n",
      disabled.stderr,
    );
    const unknown = await as(["accounts", "remove", "gone\u001b[2J"]);
    assert.equal(
      unknown.stderr,
      'book-catalogue: there is no account named "gone\\u{1b}[2J" (accounts list)\n',
    );
  });

  test("signed in as an account that is not an administrator: 403, said plainly", async () => {
    await as(["accounts", "add", "dot", "--role", "librarian"], `${PASSWORD}\n`);
    const answer = await run(["accounts", "list", "--url", service.url], "", {
      AUTH_USERNAME: "dot",
      AUTH_PASSWORD: PASSWORD,
    });
    assert.equal(answer.code, 1);
    assert.match(answer.stderr, /403: Forbidden \(accounts are for administrators/);
  });

  test("on a terminal the password is asked twice and never echoed", async () => {
    const typed = await onTerminal(["accounts", "add", "eve", "--role", "reader"], service, [
      "typed but unseen 1",
      "typed but unseen 1",
    ]);
    assert.match(typed.output, /Password for eve: /);
    assert.match(typed.output, /Again: /);
    assert.doesNotMatch(typed.output, /typed but unseen/);
    assert.equal(typed.code, 0);
    assert.equal(await signsIn(service, "eve", "typed but unseen 1"), true);
    const differ = await onTerminal(["accounts", "password", "eve"], service, [
      "first long password",
      "second long password",
    ]);
    assert.equal(differ.code, 2);
    assert.match(differ.output, /the two passwords typed differ: nothing was changed/);
    assert.equal(await signsIn(service, "eve", "typed but unseen 1"), true);
  });
});

/**
 * The command on a pseudo-terminal (util-linux `script`), each of `lines` typed once the
 * output has shown one more prompt; resolves with everything the terminal showed.
 */
function onTerminal(
  args: string[],
  service: Service,
  lines: string[],
): Promise<{ code: number; output: string }> {
  const command = [process.execPath, CLI, ...args, "--url", service.url]
    .map((word) => `'${word}'`)
    .join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    env: { PATH: process.env.PATH ?? "", ...ADMIN_ENV },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  let prompts = 0;
  child.stdout.on("data", (chunk) => {
    output += chunk;
    const seen = (output.match(/(Password for eve|New password for eve|Again): /g) ?? []).length;
    while (prompts < seen && prompts < lines.length) child.stdin.write(`${lines[prompts++]}\r`);
  });
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      child.stdin.end();
      resolve({ code: code ?? 1, output });
    }),
  );
}
