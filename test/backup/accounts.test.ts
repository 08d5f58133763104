// Backups carry the accounts, hashes included, on both stores: a restored account signs in
// with its password, every token issued before the restore ends, and a backup of format 1
// (no accounts) still restores, leaving the catalogue's accounts as they are.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { hashPassword } from "../../src/auth/passwords.js";
import { encodeAccount } from "../../src/backup/accounts.js";
import { encodeBook } from "../../src/backup/format.js";
import type { App } from "../../src/http/app.js";
import type { StoredAccount } from "../../src/store/accounts.js";
import { openStore } from "../../src/store/open.js";
import type { BookStore } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call } from "../support/helpers.js";
import {
  type Catalogue,
  cli,
  newCatalogue,
  seed,
  skipOf,
  storeAddress,
  writeBackupBytes,
} from "./catalogues.js";

const FORMAT_1 = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "format-1.backup");
// A cheap hash: what is tested is that it travels, not what it costs.
const COST = { ln: 10, r: 8, p: 1 };
const ACCOUNTS = [
  { name: "ines", role: "librarian", enabled: true, password: "ines's long password" },
  { name: "otto", role: "reader", enabled: false, password: "otto's long password" },
  { name: "ada", role: "admin", enabled: true, password: "ada's long password!" },
] as const;

/** The catalogue's store and an app on it, for the time of `use`. */
async function withApp<T>(catalogue: Catalogue, use: (app: App) => Promise<T>): Promise<T> {
  const store = await openStore({ db: storeAddress(catalogue.dbUrl), pgPoolSize: 4 });
  const app = await buildTestApp({ store });
  try {
    return await use(app);
  } finally {
    await app.close();
    await store.close();
  }
}

/** Adds the accounts, the second one removed after the third is made: ids have a gap. */
async function addAccounts(store: BookStore): Promise<void> {
  const accounts = store.accounts as NonNullable<BookStore["accounts"]>;
  const spare = await accounts.create({
    name: "spare",
    role: "reader",
    passwordHash: await hashPassword("a spare password", COST),
    tokensValidFrom: 0,
  });
  for (const { name, role, enabled, password } of ACCOUNTS) {
    const passwordHash = await hashPassword(password, COST);
    const made = await accounts.create({ name, role, passwordHash, tokensValidFrom: 0 });
    if (!enabled) await accounts.update(made?.id as number, { enabled: false });
  }
  await accounts.remove(spare?.id as number);
}

/** Every account, hash and all, read through the store. */
async function storedAccounts(catalogue: Catalogue): Promise<StoredAccount[]> {
  const store = await openStore({ db: storeAddress(catalogue.dbUrl), pgPoolSize: 4 });
  try {
    const accounts = store.accounts as NonNullable<BookStore["accounts"]>;
    const stored: StoredAccount[] = [];
    for (const { id } of await accounts.list())
      stored.push((await accounts.get(id)) as StoredAccount);
    return stored;
  } finally {
    await store.close();
  }
}

const login = (app: App, username: string, password: string) =>
  call<{ token: string }>(app, "POST", "/token", { body: { username, password } });

for (const kind of ["sqlite", "postgres"] as const) {
  describe(`accounts in backups on ${kind}`, { skip: skipOf(kind) }, () => {
    let dir: string;
    let source: Catalogue;
    const targets: Catalogue[] = [];
    const newTarget = async () => {
      const target = await newCatalogue(kind);
      targets.push(target);
      return target;
    };
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "books-backup-accounts-"));
      source = await newCatalogue(kind);
      await seed(source, 30);
      const store = await openStore({ db: storeAddress(source.dbUrl), pgPoolSize: 4 });
      await addAccounts(store).finally(() => store.close());
    });
    after(async () => {
      for (const catalogue of [source, ...targets]) await catalogue?.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    test("backup, --check and restore keep every account, hash and all; each signs in", async () => {
      const file = join(dir, "round-trip.backup");
      const backup = await cli(["backup", file, "--db", source.dbUrl]);
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, /^backed up \d+ books and 3 accounts from /);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const check = await cli(["backup", "--check", file]);
      assert.match(check.stdout, /a complete backup of \d+ books and 3 accounts taken /);
      assert.doesNotMatch(backup.stdout + backup.stderr + check.stdout + check.stderr, /scrypt/);

      const target = await newTarget();
      const restore = await cli(["restore", file, "--db", target.dbUrl]);
      assert.equal(restore.code, 0, restore.stderr);
      assert.match(restore.stdout, /^restored \d+ books and 3 accounts from /);
      const before = await storedAccounts(source);
      const after = await storedAccounts(target);
      const kept = ({ tokensValidFrom, ...account }: StoredAccount) => account;
      assert.deepEqual(after.map(kept), before.map(kept));
      assert.deepEqual(await target.books(), await source.books());
      await withApp(target, async (app) => {
        for (const { name, enabled, password } of ACCOUNTS) {
          assert.equal((await login(app, name, password)).status, enabled ? 200 : 401, name);
        }
        // A new account takes an id above every restored one.
        const admin = (await login(app, "ada", "ada's long password!")).body.data?.token;
        const added = await call<{ id: number }>(app, "POST", "/accounts", {
          token: admin as string,
          body: { name: "new", role: "reader", password: "a new long password" },
        });
        assert.equal(added.body.data?.id, Math.max(...after.map((a) => a.id), 1) + 1);
      });
    });

    test("a restore ends every token of the accounts it restores", async () => {
      const target = await newTarget();
      const file = join(dir, "tokens.backup");
      await cli(["backup", file, "--db", source.dbUrl]);
      await cli(["restore", file, "--db", target.dbUrl]);
      const old = await withApp(target, async (app) => {
        const token = (await login(app, "ines", "ines's long password")).body.data?.token;
        assert.equal((await call(app, "GET", "/books", { token })).status, 200);
        return token as string;
      });
      // As after a password changed since the backup, and changed back by the restore.
      const again = await cli(["restore", file, "--replace", "--db", target.dbUrl]);
      assert.equal(again.code, 0, again.stderr);
      await withApp(target, async (app) => {
        assert.equal((await call(app, "GET", "/books", { token: old })).status, 401);
        const fresh = (await login(app, "ines", "ines's long password")).body.data?.token;
        assert.equal((await call(app, "GET", "/books", { token: fresh })).status, 200);
      });
    });

    test("a catalogue that holds accounts is not empty, unless --replace", async () => {
      const target = await newTarget();
      const file = join(dir, "not-empty.backup");
      await cli(["backup", file, "--db", source.dbUrl]);
      const store = await openStore({ db: storeAddress(target.dbUrl), pgPoolSize: 4 });
      await store.accounts
        ?.create({ name: "here", role: "admin", passwordHash: "$scrypt$x", tokensValidFrom: 0 })
        .finally(() => store.close());
      const refused = await cli(["restore", file, "--db", target.dbUrl]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /already holds 0 books and 1 account: restore into an empty/);
      assert.deepEqual(
        (await storedAccounts(target)).map((a) => a.name),
        ["here"],
      );
      const replaced = await cli(["restore", file, "--replace", "--db", target.dbUrl]);
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.deepEqual(
        (await storedAccounts(target)).map((a) => a.name),
        ACCOUNTS.map((a) => a.name),
      );
    });

    test("a backup of format 1 restores its books and leaves the accounts as they are", async () => {
      const check = await cli(["backup", "--check", FORMAT_1]);
      assert.match(check.stdout, /a complete backup of 3 books taken .*format 1, without accounts/);
      const empty = await newTarget();
      const into = await cli(["restore", FORMAT_1, "--db", empty.dbUrl]);
      assert.equal(into.code, 0, into.stderr);
      assert.match(into.stdout, /^restored 3 books from .*\(next id 7; format 1, without accounts/);
      assert.deepEqual(
        (await empty.books()).map((book) => book.id),
        [1, 3, 4],
      );
      assert.deepEqual(await storedAccounts(empty), []);

      const target = await newTarget();
      const copy = join(dir, "copy.backup");
      await cli(["backup", copy, "--db", source.dbUrl]);
      await cli(["restore", copy, "--db", target.dbUrl]);
      const token = await withApp(target, async (app) => {
        return (await login(app, "ines", "ines's long password")).body.data?.token as string;
      });
      const before = await storedAccounts(target);
      const replaced = await cli(["restore", FORMAT_1, "--replace", "--db", target.dbUrl]);
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.deepEqual(await storedAccounts(target), before);
      assert.equal((await target.books()).length, 3);
      await withApp(target, async (app) => {
        assert.equal((await call(app, "GET", "/books", { token })).status, 200);
      });
    });
  });
}

describe("accounts between the stores", { skip: skipOf("postgres") }, () => {
  test("a SQLite backup restores into PostgreSQL and back, every account signing in", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-backup-accounts-move-"));
    const [sqlite, postgres, back] = [
      await newCatalogue("sqlite"),
      await newCatalogue("postgres"),
      await newCatalogue("sqlite"),
    ];
    try {
      const store = await openStore({ db: storeAddress(sqlite.dbUrl), pgPoolSize: 4 });
      await addAccounts(store).finally(() => store.close());
      const kept = ({ tokensValidFrom, ...account }: StoredAccount) => account;
      const before = (await storedAccounts(sqlite)).map(kept);
      for (const [from, to] of [
        [sqlite, postgres],
        [postgres, back],
      ] as const) {
        const file = join(dir, `${from.kind}.backup`);
        assert.equal((await cli(["backup", file, "--db", from.dbUrl])).code, 0);
        const restore = await cli(["restore", file, "--db", to.dbUrl]);
        assert.equal(restore.code, 0, restore.stderr);
        assert.deepEqual((await storedAccounts(to)).map(kept), before);
        await withApp(to, async (app) => {
          assert.equal((await login(app, "ines", "ines's long password")).status, 200);
        });
      }
    } finally {
      for (const catalogue of [sqlite, postgres, back]) await catalogue.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("account lines of a backup", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "books-backup-account-lines-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const account: StoredAccount = {
    id: 2,
    name: "ines",
    role: "librarian",
    enabled: true,
    passwordHash: "$scrypt$ln=10,r=8,p=1$c2FsdA$a2V5",
    tokensValidFrom: 0,
  };
  const book = encodeBook({ id: 1, title: "Dune", author: "Frank Herbert", year: 1965 });
  const cases: [string, string, RegExp][] = [
    [
      "a role that is none",
      encodeAccount({ ...account, role: "boss" as "admin" }),
      /line 2 is not an account/,
    ],
    [
      "a hash that is not scrypt's",
      encodeAccount({ ...account, passwordHash: "x" }),
      /line 2 is not an account/,
    ],
    [
      "a name twice",
      encodeAccount(account) + encodeAccount({ ...account, id: 3 }),
      /line 3 names an account twice/,
    ],
    [
      "ids that do not rise",
      encodeAccount(account) + encodeAccount({ ...account, id: 1, name: "o" }),
      /line 3 has an account id out of order/,
    ],
    ["a book where an account goes", book, /line 2 is not an account/],
  ];
  for (const [what, lines, why] of cases) {
    test(`${what} is refused by line, though the checksum holds`, async () => {
      const file = join(dir, "damaged.backup");
      const accounts = lines.split("\n").length - 1;
      writeBackupBytes(file, Buffer.from(lines + book), { books: 1, nextId: 2, accounts });
      const check = await cli(["backup", "--check", file]);
      assert.equal(check.code, 1);
      assert.match(check.stderr, why);
    });
  }

  test("an account too few is refused by count", async () => {
    const file = join(dir, "short.backup");
    writeBackupBytes(file, Buffer.from(encodeAccount(account)), {
      books: 0,
      nextId: 1,
      accounts: 2,
    });
    const check = await cli(["backup", "--check", file]);
    assert.match(check.stderr, /it holds 1 of the 2 accounts its header names/);
  });
});
