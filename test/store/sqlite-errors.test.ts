// SQLite's errors as the routes answer them: a passing condition or a file out of reach is the
// store unavailable (503), whichever thread met it, with SQLite's reason kept for the log.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import { translate } from "../../src/store/sqlite/errors.js";
import { failure, settle } from "../../src/store/sqlite/outcome.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { StoreUnavailableError } from "../../src/store/store.js";
import { describe } from "../support/describe.js";

/** The error `work` throws. */
function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  assert.fail("nothing was thrown");
}

describe("SQLite errors as the routes answer them", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "books-errors-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("a file that cannot be written is the store unavailable, with SQLite's reason", () => {
    const path = join(dir, "books.db");
    new DatabaseSync(path).exec("CREATE TABLE books (title TEXT)");
    // As SQLite opens a file its user may not write, or one on a file system mounted read-only.
    const readOnly = new DatabaseSync(path, { readOnly: true });
    const error = thrown(() => readOnly.exec("INSERT INTO books VALUES ('Dune')"));
    readOnly.close();
    assert.ok(translate(error) instanceof StoreUnavailableError);
    // As it crosses back from the writer's thread or socket.
    const crossed = thrown(() => settle(JSON.parse(JSON.stringify(failure(error)))));
    assert.ok(crossed instanceof StoreUnavailableError);
    assert.match(String((crossed.cause as Error).message), /readonly database/);
  });

  test("a file that cannot be opened is the store unavailable", () => {
    const error = thrown(() => new DatabaseSync(join(dir, "no-such-folder", "books.db")));
    assert.ok(translate(error) instanceof StoreUnavailableError);
  });

  test("a file removed under the store: writes answer 503, and no empty file is made", async () => {
    const path = join(dir, "removed.db");
    const store = openSqliteStore(path);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    // The writer's thread starts with the first write, and finds the file gone.
    const write = store.create({ title: "Dune", author: "Frank Herbert", year: 1965 });
    await assert.rejects(write, StoreUnavailableError);
    assert.equal(existsSync(path), false, "no new, empty catalogue in its place");
    await store.close();
  });

  test("anything else is left as it is: a 500", () => {
    const db = new DatabaseSync(":memory:");
    const error = thrown(() => db.exec("INSERT INTO missing VALUES (1)"));
    assert.equal(translate(error), error);
  });
});
