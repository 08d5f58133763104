// One AccountStore suite, run on SQLite (in memory and on a file) and on PostgreSQL.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { AccountStore } from "../../src/store/accounts.js";
import { openStore } from "../../src/store/open.js";
import { describe } from "../support/describe.js";
import { type OpenedStore, storesUnderTest } from "../support/helpers.js";

const kinds = await storesUnderTest({ sqliteFile: true });
const NEW = { role: "reader", passwordHash: "scrypt$x", tokensValidFrom: 100 } as const;

for (const kind of kinds) {
  describe(`AccountStore on ${kind.name}`, { skip: kind.skip }, () => {
    let opened: OpenedStore;
    let accounts: AccountStore;
    before(async () => {
      opened = await kind.open();
      accounts = opened.store.accounts as AccountStore;
    });
    after(() => opened?.dispose());

    test("with no account, find says so; create gives ids; a taken name is undefined", async () => {
      assert.deepEqual(await accounts.find("ada"), { account: undefined, anyAccount: false });
      const ada = await accounts.create({ ...NEW, name: "ada" });
      assert.deepEqual(ada, { id: ada?.id, name: "ada", role: "reader", enabled: true });
      assert.equal(await accounts.create({ ...NEW, name: "ada", role: "admin" }), undefined);
      const found = await accounts.find("ada");
      assert.deepEqual(found, {
        account: { ...NEW, id: ada?.id, name: "ada", enabled: true },
        anyAccount: true,
      });
      assert.deepEqual(await accounts.find("Ada"), { account: undefined, anyAccount: true });
    });

    test("update sets the fields present and answers the account without its hash", async () => {
      const bo = await accounts.create({ ...NEW, name: "bo" });
      const id = bo?.id as number;
      const changes = { role: "librarian", enabled: false, tokensValidFrom: 200 } as const;
      assert.deepEqual(await accounts.update(id, changes), {
        id,
        name: "bo",
        role: "librarian",
        enabled: false,
      });
      assert.deepEqual(await accounts.update(id, { passwordHash: "scrypt$y" }), {
        id,
        name: "bo",
        role: "librarian",
        enabled: false,
      });
      const stored = await accounts.get(id);
      assert.equal(stored?.passwordHash, "scrypt$y");
      assert.equal(stored?.tokensValidFrom, 200);
      assert.equal(stored?.enabled, false);
      assert.equal(await accounts.update(999_999, { role: "admin" }), undefined);
      assert.equal(await accounts.update(999_999, {}), undefined);
    });

    test("list by id; remove once; ids are not reused", async () => {
      const names = (await accounts.list()).map((a) => a.name);
      assert.deepEqual(names, ["ada", "bo"]);
      for (const account of await accounts.list()) assert.ok(!("passwordHash" in account));
      const cy = await accounts.create({ ...NEW, name: "cy" });
      assert.equal(await accounts.remove(cy?.id as number), true);
      assert.equal(await accounts.remove(cy?.id as number), false);
      assert.equal(await accounts.get(cy?.id as number), undefined);
      const dee = await accounts.create({ ...NEW, name: "dee" });
      assert.ok((dee?.id as number) > (cy?.id as number));
    });

    if (kind.name !== "sqlite") {
      test("a change through a second store is read by the first at once", async () => {
        const db =
          kind.name === "sqlite file"
            ? ({ kind: "sqlite", path: opened.dbUrl.slice("sqlite:".length) } as const)
            : ({ kind: "postgres", url: opened.dbUrl } as const);
        const other = await openStore({ db, pgPoolSize: 1 });
        try {
          const ada = (await accounts.find("ada")).account;
          await other.accounts?.update(ada?.id as number, { enabled: false });
          assert.equal((await accounts.get(ada?.id as number))?.enabled, false);
        } finally {
          await other.close();
        }
      });
    }
  });
}
