// WORKERS above 1 on SQLite: the workers' writes reach the primary's writer thread over a Unix
// socket. Two writers at one socket stand for two workers.
import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Book } from "../../src/rules/book.js";
import { serveWorkersWrites } from "../../src/store/sqlite/primary-writer.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { listenForWrites, writerAtSocket } from "../../src/store/sqlite/writes-socket.js";
import { type StoredBook, StoreUnavailableError } from "../../src/store/store.js";
import { describe } from "../support/describe.js";
import { asSent } from "./store-helpers.js";

const book = (i: number) => ({ title: `Book ${i}`, author: "Writer", year: 1900 + i });

describe("the primary's writer at its socket", () => {
  let dir: string;
  let path: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "books-writes-socket-"));
    path = join(dir, "books.db");
    await openSqliteStore(path).close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("two workers' writes commit together, each answered, in a folder of the owner's alone", async () => {
    const writer = await serveWorkersWrites(path);
    assert.equal(statSync(dirname(writer.socket)).mode & 0o777, 0o700);
    let commits = 0;
    const workers = [0, 1].map(() => writerAtSocket(writer.socket, () => commits++));
    const created = (await Promise.all(
      workers.flatMap((worker, w) =>
        Array.from({ length: 50 }, (_, i) =>
          worker.write({ op: "create", book: book(w * 50 + i) }),
        ),
      ),
    )) as Book[];
    assert.equal(new Set(created.map((b) => b.id)).size, 100);
    assert.deepEqual(
      created.map(({ title, author, year }) => ({ title, author, year })),
      Array.from({ length: 100 }, (_, i) => book(i)),
    );
    // One commit and one answer a turn for each worker, not one a write.
    assert.ok(commits <= 4, `${commits} answers for 100 writes`);
    const [first] = workers as [ReturnType<typeof writerAtSocket>];
    const id = (created[0] as Book).id;
    const updated = (await first.write({
      op: "update",
      id,
      changes: { year: 2001 },
    })) as StoredBook;
    // When it changed crosses too: the worker's answer carries it as Last-Modified.
    assert.ok((updated.changedAt as number) >= ((created[0] as StoredBook).changedAt as number));
    assert.deepEqual(asSent(updated), { ...asSent(created[0] as StoredBook), year: 2001 });
    // A missing book crosses as no book (404), not as a failure.
    assert.equal(await first.write({ op: "update", id: 999_999, changes: { year: 1 } }), undefined);
    assert.equal(await first.write({ op: "remove", id: 999_999 }), false);
    await Promise.all(workers.map((worker) => worker.close()));
    await writer.close();
    assert.equal(existsSync(dirname(writer.socket)), false);
  });

  test("account writes cross as JSON: a taken name or a missing account as none", async () => {
    const writer = await serveWorkersWrites(path);
    const worker = writerAtSocket(writer.socket, () => {});
    const account = {
      name: "ada",
      role: "reader",
      passwordHash: "scrypt$x",
      tokensValidFrom: 0,
    } as const;
    const created = await worker.write({ op: "create account", account });
    const id = (created as { id: number }).id;
    assert.deepEqual(created, { id, name: "ada", role: "reader", enabled: true });
    assert.equal(await worker.write({ op: "create account", account }), undefined);
    const changes = { role: "admin", enabled: false } as const;
    assert.deepEqual(await worker.write({ op: "update account", id, changes }), {
      id,
      name: "ada",
      ...changes,
    });
    assert.equal(await worker.write({ op: "update account", id: 999_999, changes }), undefined);
    assert.equal(await worker.write({ op: "remove account", id }), true);
    assert.equal(await worker.write({ op: "remove account", id }), false);
    await worker.close();
    await writer.close();
  });

  test("a write that cannot reach the writer answers 503, and the next connects again", async () => {
    const writer = await serveWorkersWrites(path);
    const worker = writerAtSocket(writer.socket, () => {});
    assert.equal(((await worker.write({ op: "create", book: book(1) })) as Book).title, "Book 1");
    await writer.close();
    await assert.rejects(worker.write({ op: "create", book: book(2) }), StoreUnavailableError);
    await worker.close();

    // A writer that listens again at the same place (its thread started again) is reached.
    const socket = join(dir, "stand-in.sock");
    const listen = () =>
      new Promise<{ close(): void }>((listening) => {
        const server = listenForWrites(
          socket,
          (id, _write, replyTo) => replyTo([[id, { value: "committed" }]]),
          () => listening(server),
        );
      });
    const reconnecting = writerAtSocket(socket, () => {});
    let server = await listen();
    assert.equal(await reconnecting.write({ op: "remove", id: 1 }), "committed");
    server.close();
    await assert.rejects(reconnecting.write({ op: "remove", id: 1 }), StoreUnavailableError);
    server = await listen();
    assert.equal(await reconnecting.write({ op: "remove", id: 1 }), "committed");
    await reconnecting.close();
    server.close();
  });

  test("at a stop the writer removes its own folder, never one another made in its place", async () => {
    const writer = await serveWorkersWrites(path);
    const folder = dirname(writer.socket);
    rmSync(folder, { recursive: true });
    mkdirSync(folder);
    chmodSync(folder, 0o755);
    writeFileSync(join(folder, "theirs"), "");
    await writer.close();
    assert.equal(existsSync(join(folder, "theirs")), true);
    rmSync(folder, { recursive: true });
  });

  test("a socket removed under the writer, or its folder, is made again for the workers after", async () => {
    const folder = mkdtempSync(join(dir, "socket-"));
    const socket = join(folder, "writes.sock");
    const troubles: string[] = [];
    const server = await new Promise<{ close(): void }>((listening) => {
      const listener = listenForWrites(
        socket,
        (id, _write, replyTo) => replyTo([[id, { value: "committed" }]]),
        () => listening(listener),
        { checkMs: 20, onTrouble: (error) => troubles.push(error.message) },
      );
    });
    const early = writerAtSocket(socket, () => {});
    assert.equal(await early.write({ op: "remove", id: 1 }), "committed");
    const madeAgain = async (remove: () => void) => {
      remove();
      await sleep(200);
      // A worker started after (one that replaced a worker that died) reaches the writer...
      const later = writerAtSocket(socket, () => {});
      assert.equal(await later.write({ op: "remove", id: 1 }), "committed");
      await later.close();
      // ...and one connected before goes on.
      assert.equal(await early.write({ op: "remove", id: 1 }), "committed");
    };
    await madeAgain(() => rmSync(socket));
    await madeAgain(() => rmSync(folder, { recursive: true }));
    assert.equal(statSync(folder).mode & 0o777, 0o700);

    // A folder left open to others in its place is not listened in, and that is told.
    rmSync(folder, { recursive: true });
    mkdirSync(folder, { mode: 0o755 });
    chmodSync(folder, 0o755);
    await sleep(200);
    assert.equal(existsSync(socket), false);
    assert.match(troubles.at(-1) ?? "", /is not a folder of this service's user alone/);
    // Nor do the workers send their writes to whoever listens there.
    const stranger = createServer((connection) =>
      connection.on("data", (line) => {
        const sent = JSON.parse(String(line)) as [number][];
        connection.write(`${JSON.stringify(sent.map(([id]) => [id, { value: "taken" }]))}\n`);
      }),
    );
    await new Promise<void>((listening) => stranger.listen(socket, listening));
    const later = writerAtSocket(socket, () => {});
    await assert.rejects(later.write({ op: "remove", id: 1 }), StoreUnavailableError);
    await later.close();
    stranger.close();
    await early.close();
    server.close();
  });
});
