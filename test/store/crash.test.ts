// Crash durability: under concurrent writes the server is killed with SIGKILL at a random
// moment and started again on the same DB_URL; every acknowledged write must be there.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import type { Book } from "../../src/rules/book.js";
import { describe } from "../support/describe.js";
import { freshPostgresSchema, leakedSecrets, storesUnderTest } from "../support/helpers.js";
import {
  killIfAlive,
  listeners,
  login,
  request,
  type Service,
  startService,
} from "../support/service.js";

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 3);
const WRITERS = 12;
const CREDENTIALS = { username: "crash", password: "crash-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: "crash-test-secret-of-at-least-32-bytes",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  LOG_LEVEL: "info",
};

type Fields = Omit<Book, "id">;
/** A write whose answer never came: it may or may not have happened. */
type InFlight =
  | { kind: "create"; fields: Fields }
  | { kind: "update"; before: Book; after: Book }
  | { kind: "delete"; before: Book };

/** A write the test counts on: an answer other than a success is an error, as a lost connection is. */
async function api<T>(
  service: Service,
  method: string,
  path: string,
  token: string,
  body?: unknown,
) {
  const answer = await request<T>(service, method, path, token, body);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status}`);
  return answer.body.data as T;
}

/**
 * One writer: creates books and updates and deletes only its own, so each id's history is
 * sequential. Records every acknowledged result in `settled`, and what was in flight when
 * the connection died.
 */
async function writer(
  service: Service,
  token: string,
  name: string,
  settled: Map<number, Book>,
  sent: Set<string>,
  inFlight: InFlight[],
) {
  const mine: Book[] = [];
  for (let n = 0; ; n++) {
    const roll = Math.random();
    let pending: InFlight;
    try {
      if (roll < 0.5 || mine.length === 0) {
        const fields = { title: `${name}-${n}`, author: `Author ${n}`, year: n % 3000 };
        sent.add(fields.title);
        pending = { kind: "create", fields };
        inFlight.push(pending);
        const book = await api<Book>(service, "POST", "/book", token, fields);
        settled.set(book.id, book);
        mine.push(book);
      } else if (roll < 0.8) {
        const before = mine[Math.floor(Math.random() * mine.length)] as Book;
        const after = { ...before, year: (before.year + 1) % 3000 };
        pending = { kind: "update", before, after };
        inFlight.push(pending);
        await api<Book>(service, "PUT", `/book/${before.id}`, token, { year: after.year });
        settled.set(before.id, after);
        mine[mine.indexOf(before)] = after;
      } else {
        const before = mine.splice(Math.floor(Math.random() * mine.length), 1)[0] as Book;
        pending = { kind: "delete", before };
        inFlight.push(pending);
        await api(service, "DELETE", `/book/${before.id}`, token);
        settled.delete(before.id);
      }
      inFlight.splice(inFlight.indexOf(pending), 1);
    } catch {
      return; // the server is gone: what was in flight stays in `inFlight`
    }
  }
}

/**
 * What a restart found (`actual`) against what the round's writers were told (`settled`) and
 * what they sent and never heard of (`inFlight`); `before` is the catalogue the round began with.
 */
function checkRound(
  actual: Map<number, Book>,
  settled: Map<number, Book>,
  inFlight: InFlight[],
  before: Map<number, Book>,
  sent: Set<string>,
) {
  const uncertain = new Set<number>();
  for (const write of inFlight) {
    if (write.kind === "update") {
      uncertain.add(write.before.id);
      const now = actual.get(write.before.id);
      assert.ok(
        [JSON.stringify(write.before), JSON.stringify(write.after)].includes(JSON.stringify(now)),
        `an unanswered update left ${JSON.stringify(now)}`,
      );
    } else if (write.kind === "delete") {
      uncertain.add(write.before.id);
      const now = actual.get(write.before.id);
      assert.ok(now === undefined || JSON.stringify(now) === JSON.stringify(write.before));
    }
  }
  const unansweredCreates = new Map(
    inFlight.flatMap((w) => (w.kind === "create" ? [[w.fields.title, w.fields] as const] : [])),
  );
  for (const [id, book] of settled) {
    if (!uncertain.has(id)) assert.deepEqual(actual.get(id), book, `acknowledged book ${id}`);
  }
  for (const [id, book] of actual) {
    assert.ok(sent.has(book.title), `book ${id} was never sent`);
    if (settled.has(id) || uncertain.has(id)) continue;
    // Present but never acknowledged: only an unanswered create may be, as it was sent.
    const fields = unansweredCreates.get(book.title);
    assert.ok(fields, `book ${id} appeared though neither acknowledged nor in flight`);
    assert.deepEqual({ ...fields, id }, book);
  }
  for (const id of before.keys()) {
    if (!settled.has(id) && !uncertain.has(id)) assert.ok(!actual.has(id), `deleted ${id}`);
  }
  assert.ok(settled.size > before.size || inFlight.length > 0, "the load wrote something");
}

for (const kind of await storesUnderTest()) {
  describe(`crash durability on ${kind.name}`, { skip: kind.skip }, () => {
    for (const processes of ["1", "2"]) {
      test(`${ROUNDS} rounds of SIGKILL under concurrent writes lose no acknowledged write, WORKERS=${processes}`, async () => {
        const dir = mkdtempSync(join(tmpdir(), "books-crash-"));
        const schema = kind.name === "postgres" ? await freshPostgresSchema() : undefined;
        const dbUrl = schema?.dbUrl ?? `sqlite:${join(dir, "books.db")}`;
        const env = { ...ENV, DB_URL: dbUrl, WORKERS: processes };
        // The catalogue as it must be: every acknowledged write applied.
        let expected = new Map<number, Book>();
        const sent = new Set<string>();
        const tokens: string[] = [];
        // Each service's whole output, once it has ended, holds no secret.
        const noSecrets = (ended: Service) =>
          assert.deepEqual(leakedSecrets(ended.output(), env, tokens), []);
        // Each round's restart is the next round's service, killed in its turn.
        let service = await startService(env, { direct: true });
        try {
          for (let round = 0; round < ROUNDS; round++) {
            const token = await login(service, CREDENTIALS);
            tokens.push(token);
            const settled = new Map(expected);
            const inFlight: InFlight[] = [];
            const writers = Array.from({ length: WRITERS }, (_, w) =>
              writer(service, token, `r${round}w${w}`, settled, sent, inFlight),
            );
            await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 900));
            // Every process at once: the primary first (so it starts no other), then its workers.
            service.process.kill("SIGKILL");
            for (const { pid } of listeners(service)) {
              if (pid !== service.process.pid) killIfAlive(pid);
            }
            await Promise.all(writers);

            const killed = service;
            service = await startService(env, { direct: true });
            const restartToken = await login(service, CREDENTIALS);
            tokens.push(restartToken);
            const listed = await api<Book[]>(service, "GET", "/books", restartToken);
            const actual = new Map(listed.map((b) => [b.id, b]));
            noSecrets(killed);
            checkRound(actual, settled, inFlight, expected, sent);
            expected = actual;
          }
          await service.stop();
          noSecrets(service);
          if (kind.name === "sqlite") {
            const db = new DatabaseSync(join(dir, "books.db"), { readOnly: true });
            assert.equal(db.prepare("PRAGMA integrity_check").get()?.integrity_check, "ok");
            db.close();
          }
        } finally {
          await service.stop();
          await schema?.drop();
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  });
}
