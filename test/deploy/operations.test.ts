// docs/operations.md as an operator meets it: the example environment file as shipped is
// refused, naming its blanks, and a downgrade fails with the very line the page quotes.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { LATEST_VERSION } from "../../src/store/migrations.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { ENV_EXAMPLE, parseEnvFile, ROOT, readRepositoryFile } from "../support/deploy.js";
import { startExpectingFailure } from "../support/service.js";

const PAGE = readRepositoryFile("docs/operations.md");
const failureLine = (output: string) =>
  output.split("\n").find((line) => line.startsWith("book-catalogue: start-up failed:"));

test("the example environment file as shipped stops start-up, naming its two blanks", async () => {
  const run = await startExpectingFailure(parseEnvFile(readRepositoryFile(ENV_EXAMPLE)));
  assert.equal(run.code, 1);
  const line = failureLine(run.output) ?? "";
  assert.match(line, /SECRET_TOKEN is required when NODE_ENV=production/);
  assert.match(line, /AUTH_PASSWORD is required when NODE_ENV=production/);
  assert.doesNotMatch(line, /AUTH_USERNAME|DB_URL/);
});

test("a database migrated by a newer release: start-up fails with the line the page quotes", async () => {
  const quoted = /^book-catalogue: start-up failed: cannot prepare the SQLite store at .*$/m.exec(
    PAGE,
  )?.[0];
  assert.ok(quoted, "docs/operations.md quotes the refusal");
  const dir = mkdtempSync(join(tmpdir(), "books-downgrade-"));
  try {
    const path = join(dir, "books.db");
    await openSqliteStore(path).close();
    const db = new DatabaseSync(path);
    db.prepare("INSERT INTO schema_migrations (version) VALUES (?)").run(LATEST_VERSION + 1);
    db.close();
    const run = await startExpectingFailure({ DB_URL: `sqlite:${path}` });
    assert.equal(run.code, 1);
    const expected = quoted
      .replace("/var/lib/book-catalogue/books.db", path)
      .replace("version N", `version ${LATEST_VERSION + 1}`)
      .replace("knows (M)", `knows (${LATEST_VERSION})`);
    assert.equal(failureLine(run.output), expected);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the page names every file under deploy/", () => {
  const files = readdirSync(join(ROOT, "deploy"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
  assert.equal(files.length, 7);
  for (const file of files) assert.ok(PAGE.includes(`\`${file}\``), file);
});
