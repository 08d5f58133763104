// Ids stay within 2^53 − 1, the largest a JSON number holds exactly: on both stores, a create
// past it answers 503 with nothing written while the others of its group are written, and a
// restore that would bring an id past it, or let a create pass it, is refused.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import { Messages } from "../../src/http/envelope.js";
import type { Book } from "../../src/rules/book.js";
import { openStore } from "../../src/store/open.js";
import {
  type Catalogue,
  cli,
  newCatalogue,
  skipOf,
  storeAddress,
  writeBackupFile,
} from "../backup/catalogues.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call, tokenFor } from "../support/helpers.js";
import { pgConnect } from "../support/pg.js";

const MAX = Number.MAX_SAFE_INTEGER;

/** Sets the store's counter behind its back, so that the next id it gives is `next`. */
async function setNextId(catalogue: Catalogue, next: number): Promise<void> {
  if (catalogue.kind === "sqlite") {
    const db = new DatabaseSync(catalogue.dbUrl.slice("sqlite:".length));
    try {
      db.prepare("DELETE FROM sqlite_sequence WHERE name = 'books'").run();
      db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('books', ?)").run(
        BigInt(next - 1),
      );
    } finally {
      db.close();
    }
    return;
  }
  const db = await pgConnect(catalogue.dbUrl);
  try {
    await db.sql`SELECT setval(pg_get_serial_sequence('books', 'id'), ${next - 1})`;
  } finally {
    await db.end();
  }
}

/** The service on the catalogue, in this process. */
async function serve(catalogue: Catalogue) {
  const store = await openStore({ db: storeAddress(catalogue.dbUrl), pgPoolSize: 2 });
  const app = await buildTestApp({ store });
  return { app, token: await tokenFor(app), close: () => app.close().then(() => store.close()) };
}

const newBook = (n: number) => ({ title: `Near the end ${n}`, author: "Counter", year: 2026 });

for (const kind of ["sqlite", "postgres"] as const) {
  describe(`ids on ${kind}`, { skip: skipOf(kind) }, () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), "books-id-limit-"));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    test("creates that arrive together near the largest id: those within it 201, the rest 503 with nothing written", async () => {
      const catalogue = await newCatalogue(kind);
      // The store makes its schema; then its counter is moved as a long life would have.
      const first = await serve(catalogue);
      await first.close();
      await setNextId(catalogue, MAX - 2);
      const { app, token, close } = await serve(catalogue);
      try {
        const answers = await Promise.all(
          [0, 1, 2, 3, 4].map((n) => call<Book>(app, "POST", "/book", { token, body: newBook(n) })),
        );
        const created = answers.filter((answer) => answer.status === 201);
        assert.deepEqual(
          created.map((answer) => answer.body.data?.id as number).sort((a, b) => a - b),
          [MAX - 2, MAX - 1, MAX],
        );
        const refused = answers.filter((answer) => answer.status !== 201);
        assert.equal(refused.length, 2);
        for (const answer of refused) {
          assert.deepEqual(answer.body, {
            status: 503,
            message: Messages.serviceUnavailable,
            data: null,
          });
        }
        const later = await call(app, "POST", "/book", { token, body: newBook(5) });
        assert.equal(later.status, 503);
        assert.deepEqual(
          (await catalogue.books()).map((book) => book.id),
          [MAX - 2, MAX - 1, MAX],
        );

        const listed = await call<Book[]>(app, "GET", "/books", { token });
        assert.equal(listed.status, 200);
        assert.deepEqual(
          listed.body.data?.map((book) => book.id),
          [MAX - 2, MAX - 1, MAX],
        );
        const path = `/book/${MAX}`;
        assert.equal((await call(app, "GET", path, { token })).status, 200);
        const put = await call(app, "PUT", path, { token, body: { year: 1999 } });
        assert.equal(put.status, 200);
        assert.equal((await call(app, "DELETE", path, { token })).status, 200);
      } finally {
        await close();
        await catalogue.dispose();
      }
    });

    test("restore refuses a file whose next id or a book's id is past the largest id", async () => {
      const book = { title: "Far", author: "Away", year: 2000 };
      const files: [string, { id: number }[], number, RegExp][] = [
        [
          "next-id.backup",
          [{ id: 1 }],
          MAX + 3,
          /its next id 9007199254740994 is past the largest id a book can have \(9007199254740991\)/,
        ],
        [
          "book-id.backup",
          [{ id: 7 }, { id: MAX + 1 }],
          MAX + 1,
          /line 3 has the id 9007199254740992, past the largest id a book can have \(9007199254740991\)/,
        ],
      ];
      for (const [name, ids, nextId, reason] of files) {
        const file = join(dir, name);
        writeBackupFile(
          file,
          ids.map(({ id }) => ({ id, ...book })),
          nextId,
        );
        const target = await newCatalogue(kind);
        try {
          const restore = await cli(["restore", file, "--db", target.dbUrl]);
          assert.equal(restore.code, 1, restore.stdout);
          assert.match(restore.stderr, new RegExp(`is not a usable backup: ${reason.source}\\n$`));
        } finally {
          await target.dispose();
        }
      }
    });

    test("a catalogue that gave the largest id backs up and restores, and refuses creates after", async () => {
      const file = join(dir, "full.backup");
      writeBackupFile(
        file,
        [{ id: MAX, title: "The last", author: "Counter", year: 2026 }],
        MAX + 1,
      );
      const target = await newCatalogue(kind);
      try {
        const restore = await cli(["restore", file, "--db", target.dbUrl]);
        assert.equal(restore.code, 0, restore.stderr);
        assert.match(restore.stdout, /\(next id 9007199254740992\)\n$/);
        const again = join(dir, "full-again.backup");
        const backup = await cli(["backup", again, "--db", target.dbUrl]);
        assert.equal(backup.code, 0, backup.stderr);
        assert.equal((await cli(["backup", "--check", again])).code, 0);
        const { app, token, close } = await serve(target);
        try {
          assert.equal((await call(app, "POST", "/book", { token, body: newBook(0) })).status, 503);
          const listed = await call<Book[]>(app, "GET", "/books", { token });
          assert.equal(listed.status, 200);
          assert.deepEqual(
            listed.body.data?.map((b) => b.id),
            [MAX],
          );
        } finally {
          await close();
        }
      } finally {
        await target.dispose();
      }
    });
  });
}
