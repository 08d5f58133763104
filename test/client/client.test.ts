// The typed client, against the real service.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type Book, CatalogueError, createClient } from "../../src/client/client.js";
import { Messages } from "../../src/http/envelope.js";
import { describe } from "../support/describe.js";
import { freePort, type Service, startService } from "../support/service.js";

const CREDENTIALS = { username: "librarian", password: "client-test-password" };
const ENV = {
  HOST: "127.0.0.1",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  LOG_LEVEL: "info",
};

describe("createClient", () => {
  let dir: string;
  let port: number;
  let service: Service;
  const start = (secret: string) =>
    startService(
      {
        ...ENV,
        PORT: String(port),
        DB_URL: `sqlite:${join(dir, "books.db")}`,
        SECRET_TOKEN: secret,
      },
      { direct: true },
    );
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "books-client-"));
    port = await freePort();
    service = await start("first-secret-of-at-least-32-bytes-long");
  });
  after(async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("creates, reads, updates and deletes typed books", async () => {
    const client = createClient({ baseUrl: `${service.url}/`, ...CREDENTIALS });
    const created: Book = await client.createBook({
      title: "Emma",
      author: "Jane Austen",
      year: 1815,
    });
    assert.deepEqual(await client.getBook(created.id), created);
    assert.deepEqual(await client.updateBook(created.id, { year: 1816 }), {
      ...created,
      year: 1816,
    });
    await client.deleteBook(created.id);
    await assert.rejects(client.getBook(created.id), (error: unknown) => {
      assert.ok(error instanceof CatalogueError);
      assert.equal(error.status, 404);
      assert.equal(error.message, Messages.bookNotFound);
      return true;
    });
  });

  test("a save on the version read: the second librarian's gets 412, the first's stands", async () => {
    const client = createClient({ baseUrl: service.url, ...CREDENTIALS });
    const { id } = await client.createBook({
      title: "Persuasion",
      author: "Jane Austen",
      year: 1817,
    });
    const read = await client.getTaggedBook(id);
    assert.match(read.etag, /^".+"$/);
    const first = await client.updateTaggedBook(id, { year: 1818 }, read.etag);
    assert.deepEqual(first.book, { ...read.book, year: 1818 });
    assert.notEqual(first.etag, read.etag);
    await assert.rejects(
      client.updateTaggedBook(id, { title: "Persuasion!" }, read.etag),
      new CatalogueError(412, Messages.bookChanged),
    );
    await assert.rejects(
      client.deleteBook(id, { ifMatch: read.etag }),
      new CatalogueError(412, Messages.bookChanged),
    );
    assert.deepEqual(await client.getTaggedBook(id), first);
    await client.deleteBook(id, { ifMatch: first.etag });
  });

  test("refusals carry the status and message, and a 400 its reason", async () => {
    const client = createClient({ baseUrl: service.url, ...CREDENTIALS });
    await assert.rejects(
      client.createBook({ title: "x".repeat(501), author: "A", year: 1 }),
      new CatalogueError(400, Messages.invalidInput, { reason: "title: at most 500 characters" }),
    );
    await assert.rejects(client.listPage({ limit: 5000 }), {
      status: 400,
      message: Messages.invalidInput,
      reason: "limit: a whole number from 1 to 1000",
    });
    const wrong = createClient({ baseUrl: service.url, username: "librarian", password: "nope" });
    await assert.rejects(wrong.token(), new CatalogueError(401, Messages.invalidCredentials));
  });

  test("pages follow one another, and books() walks them all", async () => {
    const client = createClient({ baseUrl: service.url, ...CREDENTIALS });
    const made = [];
    for (let i = 0; i < 12; i++) {
      made.push(await client.createBook({ title: `Vol. ${i}`, author: "Proust", year: 1913 + i }));
    }
    const first = await client.listPage({ author: "Proust", limit: 5 });
    assert.deepEqual(first.books, made.slice(0, 5));
    assert.deepEqual(first.next, { author: "Proust", limit: 5, after: made[4]?.id });
    const walked = [];
    for await (const book of client.books({ author: "Proust", limit: 5 })) walked.push(book);
    assert.deepEqual(walked, made);
    // q: the start of each word, case and accents aside; a one-character word whole.
    const search = async (q: string) => {
      const titles = [];
      for await (const book of client.books({ q, limit: 5 })) titles.push(book.title);
      return titles;
    };
    assert.deepEqual(await search("vol. 1"), ["Vol. 1"]);
    assert.deepEqual(await search("VOL 10"), ["Vol. 10"]);
    assert.equal((await search("prou vo")).length, 12);
    const recherche = await client.createBook({
      title: "À la recherche du temps perdu",
      author: "Marcel Proust",
      year: 1913,
    });
    assert.deepEqual(await search("a la RECHER"), [recherche.title]);
    assert.deepEqual((await client.listPage({ q: "temps perdu marcel" })).books, [recherche]);
    await client.deleteBook(recherche.id);
    const newestFirst = await client.listPage({ author: "Proust", sort: "-year", limit: 5 });
    assert.deepEqual(newestFirst.books, made.slice(7).reverse());
    assert.deepEqual(newestFirst.next, {
      author: "Proust",
      sort: "-year",
      limit: 5,
      after: made[7]?.id,
      afterKey: String(made[7]?.year),
    });
    const sorted = [];
    for await (const book of client.books({ author: "Proust", sort: "-year", limit: 5 })) {
      sorted.push(book);
    }
    assert.deepEqual(sorted, [...made].reverse());
  });

  test("a service that cannot be reached is a CatalogueError that says so, with the cause", async () => {
    const closed = await freePort();
    const client = createClient({ baseUrl: `http://127.0.0.1:${closed}`, ...CREDENTIALS });
    for (const attempt of [client.token(), client.getBook(1), client.listPage()]) {
      await assert.rejects(attempt, (error: unknown) => {
        assert.ok(error instanceof CatalogueError, String(error));
        assert.equal(error.status, 0);
        assert.equal(
          error.message,
          `cannot reach the service at http://127.0.0.1:${closed}: ECONNREFUSED`,
        );
        assert.ok(error.cause instanceof TypeError);
        return true;
      });
    }
  });

  test("listPage counts the books its filters match only when asked", async () => {
    const client = createClient({ baseUrl: service.url, ...CREDENTIALS });
    for (let i = 0; i < 3; i++) {
      await client.createBook({ title: `Maigret ${i}`, author: "Simenon", year: 1931 + i });
    }
    const counted = await client.listPage({ author: "Simenon", limit: 2 }, { count: true });
    assert.equal(counted.total, 3);
    assert.equal(counted.books.length, 2);
    assert.deepEqual(counted.next, { author: "Simenon", limit: 2, after: counted.books[1]?.id });
    assert.equal((await client.listPage({ author: "Simenon", limit: 2 })).total, undefined);
  });

  test("with a token and no credentials: the token is used, and reported as it arrives", async () => {
    const fetched: { token: string; expiresAt: number }[] = [];
    const withCredentials = createClient({
      baseUrl: service.url,
      ...CREDENTIALS,
      onToken: (token, expiresAt) => fetched.push({ token, expiresAt }),
    });
    const token = await withCredentials.token();
    assert.equal(fetched[0]?.token, token);
    const fifteenMinutes = Date.now() + 15 * 60_000;
    assert.ok(Math.abs((fetched[0]?.expiresAt ?? 0) - fifteenMinutes) < 5_000);

    const tokenOnly = createClient({ baseUrl: service.url, token });
    const book = await tokenOnly.createBook({ title: "Germinal", author: "Zola", year: 1885 });
    assert.deepEqual(await tokenOnly.getBook(book.id), book);
    const refused = createClient({ baseUrl: service.url, token: `${token}x` });
    await assert.rejects(refused.getBook(book.id), new CatalogueError(401, Messages.invalidToken));
    const none = createClient({ baseUrl: service.url });
    await assert.rejects(none.getBook(book.id), (error: unknown) => {
      assert.ok(error instanceof CatalogueError);
      return error.status === 401;
    });
  });

  test("accounts: an administrator adds one; it signs in, changes its password, is refused what its role does not allow", async () => {
    const admin = createClient({ baseUrl: service.url, ...CREDENTIALS });
    assert.deepEqual(await admin.signedIn(), { id: null, name: "librarian", role: "admin" });
    const added = await admin.createAccount({
      name: "Ines",
      role: "reader",
      password: "first long password",
    });
    assert.deepEqual(added, { id: added.id, name: "Ines", role: "reader", enabled: true });
    const ines = createClient({
      baseUrl: service.url,
      username: "Ines",
      password: "first long password",
    });
    assert.deepEqual(await ines.signedIn(), { id: added.id, name: "Ines", role: "reader" });
    await assert.rejects(ines.createBook({ title: "T", author: "A", year: 1 }), {
      name: "CatalogueError",
      status: 403,
      message: Messages.forbidden,
    });
    await ines.changeOwnPassword("first long password", "second long password");
    assert.equal((await ines.signedIn()).name, "Ines", "signed in again with the new one");
    const promoted = await admin.updateAccount(added.id, { role: "librarian" });
    assert.equal(promoted.role, "librarian");
    assert.equal((await ines.createBook({ title: "T", author: "A", year: 1 })).title, "T");
    assert.deepEqual(
      (await admin.listAccounts()).map((account) => account.name),
      ["Ines"],
    );
    await admin.deleteAccount(added.id);
    assert.deepEqual(await admin.listAccounts(), []);
  });

  test("the change log: the newest entry, a book's history, and a deleted book restored", async () => {
    const client = createClient({ baseUrl: service.url, ...CREDENTIALS });
    const book = await client.createBook({ title: "Germinal", author: "Zola", year: 1885 });
    for (const year of [1886, 1887, 1888]) await client.updateBook(book.id, { year });
    await client.deleteBook(book.id);
    const { changes, next } = await client.changesPage({ since: 0 });
    assert.equal(next, changes.at(-1)?.seq);
    assert.equal(await client.newestChange(), next);
    assert.deepEqual(await client.changesPage({ since: next }), { changes: [], next });

    const history = await client.history(book.id);
    assert.deepEqual(
      history.map(({ op, by }) => [op, by?.name]),
      [
        ["create", "librarian"],
        ["update", "librarian"],
        ["update", "librarian"],
        ["update", "librarian"],
        ["delete", "librarian"],
      ],
    );
    assert.deepEqual(history[1]?.before, book);
    assert.deepEqual(await client.restore(book.id), { ...book, year: 1888 });
    assert.equal(await client.newestChange(), next + 1);
    await assert.rejects(client.restore(book.id), { name: "CatalogueError", status: 409 });
  });

  test("a token refused (the service restarted with a new secret) is renewed once, transparently", async () => {
    const client = createClient({ baseUrl: service.url, ...CREDENTIALS });
    const book = await client.createBook({ title: "Nana", author: "Zola", year: 1880 });
    const before = await client.token();
    await service.stop();
    service = await start("second-secret-of-at-least-32-bytes-long");
    assert.deepEqual(await client.getBook(book.id), book);
    assert.notEqual(await client.token(), before);
  });
});
