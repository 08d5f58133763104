// book-catalogue backup, backup --check and restore, on both stores, as an operator runs
// them: against a catalogue the service keeps writing to, between the stores, killed midway,
// and on damaged files.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import type { Book } from "../../src/rules/book.js";
import { searchTerms } from "../../src/rules/search.js";
import { openStore } from "../../src/store/open.js";
import { openPostgresBackup } from "../../src/store/postgres/backup.js";
import { asSent } from "../store/store-helpers.js";
import { describe } from "../support/describe.js";
import { pgConnect } from "../support/pg.js";
import { login, request, type Service, startService } from "../support/service.js";
import {
  type Catalogue,
  CLI,
  cli,
  newCatalogue,
  seed,
  skipOf,
  storeAddress,
} from "./catalogues.js";

const CREDENTIALS = { username: "backup", password: "backup-test-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: "backup-test-secret-of-at-least-32-bytes",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  LOG_LEVEL: "info",
};
const WRITERS = 20;

/** The books of a backup file, and its header. */
function readBackup(file: string): { header: Record<string, unknown>; books: Book[] } {
  const [head = "", ...lines] = readFileSync(file, "utf8").split("\n");
  return {
    header: JSON.parse(head),
    books: lines.filter((line) => line !== "").map((line) => JSON.parse(line) as Book),
  };
}

/** Writers that create books (and delete some they made) until told to stop. */
function startWriters(service: Service, token: string) {
  const acknowledged: { book: Book; at: number }[] = [];
  const deleted: { id: number; at: number }[] = [];
  // A book whose delete was sent may or may not be in a backup taken meanwhile.
  const deleting = new Set<number>();
  const failures: string[] = [];
  let running = true;
  const writer = async (w: number) => {
    for (let n = 0; running; n++) {
      const fields = { title: `Written ${w}.${n}`, author: `Writer ${w}`, year: 2000 + (n % 20) };
      const answer = await request<Book>(service, "POST", "/book", token, fields);
      if (answer.status !== 201) failures.push(`create: ${answer.status}`);
      else acknowledged.push({ book: answer.body.data as Book, at: Date.now() });
      if (n % 5 === 4 && answer.status === 201) {
        const id = (answer.body.data as Book).id;
        deleting.add(id);
        const gone = await request(service, "DELETE", `/book/${id}`, token);
        if (gone.status !== 200) failures.push(`delete: ${gone.status}`);
        else deleted.push({ id, at: Date.now() });
      }
    }
  };
  const done = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  return {
    acknowledged,
    deleted,
    deleting,
    failures,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

for (const kind of ["sqlite", "postgres"] as const) {
  describe(`backup and restore on ${kind}`, { skip: skipOf(kind) }, () => {
    let dir: string;
    let source: Catalogue;
    let service: Service;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "books-backup-files-"));
      source = await newCatalogue(kind);
      await seed(source, 3000);
      service = await startService({ ...ENV, DB_URL: source.dbUrl }, { direct: true });
    });
    after(async () => {
      await service?.stop();
      await source?.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    test("a backup taken during 20 writers holds every book acknowledged before it began, and restores exactly", async () => {
      const highestBefore = (await source.books()).at(-1)?.id ?? 0;
      const everGivenBefore = (await source.nextId()) - 1;
      assert.ok(everGivenBefore > highestBefore, "the seed deleted its newest books");
      const token = await login(service, CREDENTIALS);
      const writers = startWriters(service, token);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const began = Date.now();
      const file = join(dir, "during-writes.backup");
      const backup = await cli(["backup", file, "--db", source.dbUrl]);
      await writers.stop();
      assert.equal(backup.code, 0, backup.stderr);
      assert.deepEqual(writers.failures, [], "the service kept serving every write");
      assert.ok(
        writers.acknowledged.some((write) => write.at > began),
        "writes went on during the backup",
      );

      const { header, books } = readBackup(file);
      const ids = new Set(books.map((book) => book.id));
      const deletedBefore = new Set(writers.deleted.filter((d) => d.at < began).map((d) => d.id));
      for (const { book, at } of writers.acknowledged) {
        if (at < began && !writers.deleting.has(book.id)) {
          assert.deepEqual(
            books.find((b) => b.id === book.id),
            book,
          );
        }
      }
      for (const id of deletedBefore)
        assert.ok(!ids.has(id), `book ${id}, deleted before, is absent`);
      assert.equal(header.books, books.length);
      assert.match(
        backup.stdout,
        new RegExp(`^backed up ${books.length} books and 0 accounts from `),
      );

      const target = await newCatalogue(kind);
      try {
        const restore = await cli(["restore", file, "--db", target.dbUrl]);
        assert.equal(restore.code, 0, restore.stderr);
        assert.deepEqual(await target.books(), books);
        const given = writers.acknowledged.filter((w) => w.at < began).map((w) => w.book.id);
        const highestEver = Math.max(everGivenBefore, ...given, ...ids);
        const restored = await startService({ ...ENV, DB_URL: target.dbUrl }, { direct: true });
        try {
          const created = await request<Book>(
            restored,
            "POST",
            "/book",
            await login(restored, CREDENTIALS),
            {
              title: "After the restore",
              author: "Someone",
              year: 2026,
            },
          );
          assert.equal(created.status, 201);
          const id = (created.body.data as Book).id;
          assert.ok(id > highestEver, `the new id ${id} is above every id given (${highestEver})`);
          assert.ok(id >= (header.nextId as number));
        } finally {
          await restored.stop();
        }
      } finally {
        await target.dispose();
      }
    });

    test("backup --check proves an intact file and refuses a damaged one; restore writes nothing from it", async () => {
      const file = join(dir, "intact.backup");
      assert.equal((await cli(["backup", file, "--db", source.dbUrl])).code, 0);
      const check = await cli(["backup", "--check", file]);
      assert.equal(check.code, 0, check.stderr);
      assert.match(
        check.stdout,
        /: a complete backup of \d+ books and 0 accounts taken .* \(next id \d+\)\n$/,
      );

      const bytes = readFileSync(file);
      const damaged = join(dir, "damaged.backup");
      // The seed's writes run concurrently, so which books it deleted varies: take the first
      // book after the header rather than a fixed one.
      const at = bytes.indexOf(" book ", bytes.indexOf("\n")) + 1;
      assert.ok(at > 0, "the backup holds a seeded book");
      // One letter of one title: still JSON, still a book, but not the bytes that were written.
      writeFileSync(
        damaged,
        Buffer.concat([bytes.subarray(0, at), Buffer.from("c"), bytes.subarray(at + 1)]),
      );
      const cut = join(dir, "cut.backup");
      writeFileSync(cut, bytes.subarray(0, bytes.length - 40));
      const broken = join(dir, "broken.backup");
      writeFileSync(
        broken,
        Buffer.concat([bytes.subarray(0, at), Buffer.from("\n"), bytes.subarray(at + 1)]),
      );
      // The header's next id raised: the ids stay below it, but the checksum seals the header.
      const header = join(dir, "header.backup");
      const nextId = JSON.parse(bytes.subarray(0, 512).toString()).nextId as number;
      writeFileSync(
        header,
        bytes.toString("latin1").replace(`"nextId":${nextId}`, `"nextId":${nextId + 1}`),
        "latin1",
      );
      const expected: [string, RegExp][] = [
        [header, /its checksum does not match: the file is damaged/],
        [damaged, /its checksum does not match: the file is damaged/],
        [cut, /its last line is cut short/],
        [broken, /line \d+ is not JSON: the file is damaged/],
      ];
      for (const [path, reason] of expected) {
        const refused = await cli(["backup", "--check", path]);
        assert.equal(refused.code, 1);
        assert.match(
          refused.stderr,
          new RegExp(`^book-catalogue: ${path} is not a usable backup: ${reason.source}\\n$`),
        );
        const target = await newCatalogue(kind);
        try {
          const restore = await cli(["restore", path, "--db", target.dbUrl]);
          assert.equal(restore.code, 1);
          assert.match(restore.stderr, reason);
          if (kind === "sqlite")
            assert.ok(!existsSync(target.dbUrl.slice("sqlite:".length)), "no database made");
          else await assert.rejects(target.books(), /relation "books" does not exist/);
        } finally {
          await target.dispose();
        }
      }
    });

    test("restore refuses a catalogue that holds books, unless --replace", async () => {
      const file = join(dir, "replace.backup");
      assert.equal((await cli(["backup", file, "--db", source.dbUrl])).code, 0);
      const target = await newCatalogue(kind);
      try {
        await seed(target, 20);
        // A store open on the catalogue keeps the books it reads; the restore replaces them all.
        const running = await openStore({ db: storeAddress(target.dbUrl), pgPoolSize: 1 });
        const [first] = (await target.books()) as [Book];
        await running.update(first.id, { title: `${first.title}, revised` });
        const before = await target.books();
        const refused = await cli(["restore", file, "--db", target.dbUrl]);
        assert.equal(refused.code, 1);
        assert.match(
          refused.stderr,
          new RegExp(
            `the catalogue at \\S+ already holds ${before.length} books: restore into an empty catalogue, or add --replace to replace them\\n$`,
          ),
        );
        assert.deepEqual(await target.books(), before);
        const kept = await Promise.all(
          before.map(async (book) => asSent(await running.get(book.id))),
        );
        assert.deepEqual(kept, before);
        const replaced = await cli(["restore", file, "--db", target.dbUrl, "--replace"]);
        assert.equal(replaced.code, 0, replaced.stderr);
        assert.match(replaced.stdout, new RegExp(`\\(next id ${await target.nextId()}\\)\n$`));
        const restored = readBackup(file).books;
        assert.deepEqual(await target.books(), restored);
        const read = await Promise.all(
          before.map(async (book) => asSent(await running.get(book.id))),
        );
        const byId = new Map(restored.map((book) => [book.id, book]));
        assert.notDeepEqual(byId.get(first.id), before[0]);
        assert.deepEqual(
          read,
          before.map((book) => byId.get(book.id)),
        );
        await running.close();
      } finally {
        await target.dispose();
      }
    });
  });
}

test("backup names a catalogue that is not there, and makes no file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "books-backup-missing-"));
  try {
    const run = await cli([
      "backup",
      join(dir, "b.backup"),
      "--db",
      `sqlite:${join(dir, "none.db")}`,
    ]);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      `book-catalogue: there is no catalogue at sqlite:${join(dir, "none.db")}\n`,
    );
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("backup names a folder it cannot write, and a database that holds no catalogue", async () => {
  const dir = mkdtempSync(join(tmpdir(), "books-backup-refusals-"));
  const notCatalogue = await newCatalogue(skipOf("postgres") ? "sqlite" : "postgres");
  try {
    const source = await newCatalogue("sqlite");
    await seed(source, 10);
    const unwritable = await cli(["backup", join(dir, "none", "b.backup"), "--db", source.dbUrl]);
    await source.dispose();
    assert.equal(unwritable.code, 1);
    assert.match(
      unwritable.stderr,
      /^book-catalogue: cannot write \S+b\.backup: ENOENT: no such file or directory/,
    );
    if (notCatalogue.kind === "sqlite") writeFileSync(notCatalogue.dbUrl.slice(7), "");
    const empty = await cli(["backup", join(dir, "b.backup"), "--db", notCatalogue.dbUrl]);
    assert.equal(empty.code, 1);
    assert.match(
      empty.stderr,
      /^book-catalogue: cannot read the catalogue at \S+: it holds no catalogue/,
    );
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    await notCatalogue.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("on a terminal, backup and --check draw a progress bar", async () => {
  const source = await newCatalogue("sqlite");
  try {
    await seed(source, 2500);
    const file = join(dirname(source.dbUrl.slice(7)), "b.backup");
    // script(1) gives the command a terminal, and prints what the terminal showed.
    for (const args of [`backup ${file} --db ${source.dbUrl}`, `backup --check ${file}`]) {
      const shown = await new Promise<string>((resolve, reject) =>
        execFile(
          "script",
          ["-qec", `${process.execPath} ${CLI} ${args}`, "/dev/null"],
          (error, stdout) => (error ? reject(error) : resolve(stdout)),
        ),
      );
      assert.match(shown, /\r\[#{30}\] 2134\/2134 (written|checked)\r?\n/);
    }
  } finally {
    await source.dispose();
  }
});

test("backup gives up on a PostgreSQL that accepts connections and never answers, within 10 s", async () => {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const dir = mkdtempSync(join(tmpdir(), "books-backup-dropped-"));
  try {
    const started = Date.now();
    const run = await cli([
      "backup",
      join(dir, "b.backup"),
      "--db",
      `postgres://u:secret@127.0.0.1:${port}/db`,
    ]);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      `book-catalogue: cannot reach PostgreSQL at postgres://u@127.0.0.1:${port}/db within 10 s\n`,
    );
    assert.ok(Date.now() - started < 20_000);
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    for (const socket of sockets) socket.destroy();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a SQLite restore, which builds the books' indexes after their rows, leaves them as a migration makes them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "books-restore-indexes-"));
  const schemaOf = (path: string) => {
    const db = new DatabaseSync(path);
    const rows = db
      .prepare(
        "SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all();
    db.close();
    return rows;
  };
  try {
    const source = join(dir, "source.db");
    const store = await openStore({ db: { kind: "sqlite", path: source }, pgPoolSize: 1 });
    for (const year of [1965, 1932, 1949]) await store.create({ title: "T", author: "A", year });
    await store.close();
    const file = join(dir, "books.backup");
    assert.equal((await cli(["backup", file, "--db", `sqlite:${source}`])).code, 0);
    const restored = join(dir, "restored.db");
    assert.equal((await cli(["restore", file, "--db", `sqlite:${restored}`])).code, 0);
    assert.deepEqual(schemaOf(restored), schemaOf(source));
    const db = new DatabaseSync(restored);
    const plan = db
      .prepare("EXPLAIN QUERY PLAN SELECT id FROM books WHERE year = 1949 ORDER BY id")
      .all()
      .map((row) => row.detail);
    db.close();
    assert.match(String(plan), /USING (COVERING )?INDEX books_year_id/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("a PostgreSQL restore", { skip: skipOf("postgres") }, () => {
  test("books first, indexes after: words, keys and indexes as creates make them", async () => {
    const source = await newCatalogue("postgres");
    const target = await newCatalogue("postgres");
    const dir = mkdtempSync(join(tmpdir(), "books-restore-copy-"));
    // Line ends, tabs, backslashes and quotes, which a restore writing text would have to escape.
    const texts = [
      "Tab\there",
      "Two\nlines\r\nand CR",
      "Back\\slash \\N",
      "O'Brien's “Übung”",
      "東京の本 Ünder",
    ];
    const stored = (catalogue: Catalogue) =>
      withConnection(catalogue.dbUrl, async (db) => ({
        books: await db.sql`SELECT id, title, author, year, title_words::text AS tw,
          author_words::text AS aw, title_key, author_key FROM books ORDER BY id`,
        years: await db.sql`SELECT id, year FROM books_years ORDER BY id`,
        indexes: await db.sql`SELECT indexname,
            replace(indexdef, current_schema() || '.', '') AS definition
          FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname`,
      }));
    try {
      const store = await openStore({ db: storeAddress(source.dbUrl), pgPoolSize: 1 });
      for (const [i, title] of texts.entries()) {
        await store.create({ title, author: texts.at(-1 - i) as string, year: 1990 + i });
      }
      await store.close();
      const file = join(dir, "books.backup");
      assert.equal((await cli(["backup", file, "--db", source.dbUrl])).code, 0);
      const restore = await cli(["restore", file, "--db", target.dbUrl]);
      assert.equal(restore.code, 0, restore.stderr);
      const [before, after] = [await stored(source), await stored(target)];
      assert.equal(after.books.length, texts.length);
      assert.deepEqual(after, before);
      // Analysed at once: the planner knows the rows it has.
      const analysed = await withConnection(
        target.dbUrl,
        (db) =>
          db.sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stats
          WHERE schemaname = current_schema() AND tablename IN ('books', 'books_years')`,
      );
      assert.ok((analysed[0]?.n ?? 0) > 0, "the restored tables have statistics");
      const restored = await openStore({ db: storeAddress(target.dbUrl), pgPoolSize: 1 });
      try {
        assert.equal(await restored.count({ search: searchTerms("übung") }), 2);
        assert.equal(await restored.count({ search: searchTerms("lines") }), 2);
      } finally {
        await restored.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await source.dispose();
      await target.dispose();
    }
  });

  test("an index that takes longer than a page's bound is built all the same", async () => {
    // A page's statements have a bound (a minute; a second here), the index builds an hour:
    // a word index of 10^7 books took more than the minute, and the restore failed with it.
    const target = await newCatalogue("postgres");
    try {
      await (await openStore({ db: storeAddress(target.dbUrl), pgPoolSize: 1 })).close();
      await withConnection(target.dbUrl, async (db) => {
        await db.script(`CREATE FUNCTION slow_id(id bigint) RETURNS bigint IMMUTABLE
            LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.01); RETURN id; END $$;
          CREATE INDEX books_slow ON books (slow_id(id));`);
      });
      const books = Array.from({ length: 200 }, (_, i) => {
        return { id: i + 1, title: `Book ${i + 1}`, author: "Slow", year: 2000 };
      });
      const pages = async function* () {
        yield books;
      };
      const store = await openPostgresBackup(target.dbUrl, "test", "restore", 1_000);
      try {
        assert.equal(await store.restore(pages(), 201, false, undefined), 201);
      } finally {
        await store.close();
      }
      const indexes = await withConnection(
        target.dbUrl,
        (db) => db.sql`SELECT indexname FROM pg_indexes
          WHERE schemaname = current_schema() AND indexname = 'books_slow'`,
      );
      assert.equal(indexes.length, 1);
    } finally {
      await target.dispose();
    }
  });
});

/** `read` on a connection of its own to the catalogue at `url`, closed after. */
async function withConnection<T>(
  url: string,
  read: (db: Awaited<ReturnType<typeof pgConnect>>) => Promise<T>,
) {
  const db = await pgConnect(url);
  try {
    return await read(db);
  } finally {
    await db.end();
  }
}
