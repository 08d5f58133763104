// The change feed under load, as operators run it: SQLite with WORKERS 1 and 2, and two
// instances on one PostgreSQL. 2,000 mixed writes from 20 clients while three followers
// stream: each sees every acknowledged write once, in order; one killed and resumed misses
// nothing; the log replayed is the catalogue. And a kill -9 under writes leaves no entry
// without its change, no change without its entry.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Book } from "../../src/rules/book.js";
import { describe } from "../support/describe.js";
import { freshPostgresDatabase, postgresSkipReason } from "../support/helpers.js";
import { login, request, type Service, startService } from "../support/service.js";
import { type Event, openStream } from "../support/sse.js";

const CREDENTIALS = { username: "feeder", password: "feeder-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  SECRET_TOKEN: "followers-secret-that-is-at-least-32-bytes",
  LOG_LEVEL: "info",
};
const CLIENTS = 20;
const WRITES_EACH = 100;

interface Entry {
  seq: number;
  op: string;
  id: number;
  book: Book | null;
}

/**
 * A page of the log, as a careful client reads it: a 503 (the store slow for a moment, on a
 * busy machine just after a restart) asked again after its Retry-After, three times at most.
 * Any other answer fails the test, with what the service logged.
 */
async function logPage(service: Service, token: string, since: number) {
  for (let attempt = 1; ; attempt++) {
    const page = await request<Entry[]>(
      service,
      "GET",
      `/changes?since=${since}&limit=1000`,
      token,
    );
    if (page.status === 503 && attempt < 3) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    assert.equal(page.status, 200, `GET /changes answered ${page.status}:\n${service.output()}`);
    return page;
  }
}

/** Every entry of the log from the start, a page at a time. */
async function wholeLog(service: Service, token: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  for (let since = 0; ; ) {
    const page = await logPage(service, token, since);
    const data = page.body.data as Entry[];
    entries.push(...data);
    if (data.length < 1000) return entries;
    since = (data.at(-1) as Entry).seq;
  }
}

/** One client's writes: creates, then updates and deletes of its own books, acknowledged. */
async function writer(services: Service[], tokens: string[], client: number) {
  const mine: number[] = [];
  const acknowledged: string[] = [];
  for (let i = 0; i < WRITES_EACH; i++) {
    const at = (client + i) % services.length;
    const [service, token] = [services[at] as Service, tokens[at] as string];
    const kind = mine.length === 0 || i % 5 < 2 ? "create" : i % 5 < 4 ? "update" : "delete";
    if (kind === "create") {
      const book = { title: `c${client} b${i}`, author: "Load", year: i };
      const answer = await request<Book>(service, "POST", "/book", token, book);
      assert.equal(answer.status, 201);
      mine.push(answer.body.data?.id as number);
      acknowledged.push(`create ${answer.body.data?.id} ${JSON.stringify(answer.body.data)}`);
    } else if (kind === "update") {
      const id = mine[i % mine.length] as number;
      const answer = await request<Book>(service, "PUT", `/book/${id}`, token, { year: 3000 + i });
      assert.equal(answer.status, 200);
      acknowledged.push(`update ${id} ${JSON.stringify(answer.body.data)}`);
    } else {
      const id = mine.splice(i % mine.length, 1)[0] as number;
      assert.equal((await request(service, "DELETE", `/book/${id}`, token)).status, 200);
      acknowledged.push(`delete ${id} null`);
    }
  }
  return acknowledged;
}

const keyOf = (e: { op: string; id: number; book: Book | null }) =>
  `${e.op} ${e.id} ${JSON.stringify(e.book)}`;

function assertInOrderOnce(events: Event[], log: Entry[]) {
  const seqs = events.map((e) => e.data.seq);
  assert.ok(
    seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] as number)),
    "in sequence order",
  );
  assert.deepEqual(
    seqs,
    log.map((e) => e.seq),
    "every entry once",
  );
}

const setups = [
  { name: "SQLite", workers: "1", instances: 1, postgres: false },
  { name: "SQLite with WORKERS=2", workers: "2", instances: 1, postgres: false },
  { name: "two instances on one PostgreSQL", workers: "1", instances: 2, postgres: true },
];

for (const setup of setups) {
  const skip = setup.postgres ? await postgresSkipReason() : false;
  describe(`followers on ${setup.name}`, { skip }, () => {
    let folder: string;
    let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | undefined;
    let env: Record<string, string>;
    before(async () => {
      folder = mkdtempSync(join(tmpdir(), "books-followers-"));
      database = setup.postgres ? await freshPostgresDatabase() : undefined;
      const dbUrl = database?.url ?? `sqlite:${join(folder, "books.db")}`;
      env = { ...ENV, DB_URL: dbUrl, WORKERS: setup.workers };
    });
    after(async () => {
      await database?.drop();
      rmSync(folder, { recursive: true, force: true });
    });

    test("2,000 writes from 20 clients: three followers see each once, in order", async () => {
      const services: Service[] = [];
      for (let i = 0; i < setup.instances; i++) services.push(await startService(env));
      try {
        const tokens = await Promise.all(services.map((s) => login(s, CREDENTIALS)));
        const url = (i: number) => `${services[i % services.length]?.url}/changes?since=0`;
        const followers = [0, 1, 2].map((i) =>
          openStream(url(i), tokens[i % tokens.length] as string),
        );
        for (const follower of followers) assert.equal((await follower.opened).status, 200);
        const writing = Array.from({ length: CLIENTS }, (_, c) => writer(services, tokens, c));
        // The third follower is killed partway and resumed from its last id.
        const third = followers[2] as ReturnType<typeof openStream>;
        await third.until(() => third.events.length >= 200, 30_000);
        third.close();
        const kept = [...third.events];
        await new Promise((resolve) => setTimeout(resolve, 300));
        const resumed = openStream(url(2), tokens[2 % tokens.length] as string, {
          "last-event-id": (kept.at(-1) as Event).id,
        });
        const acknowledged = (await Promise.all(writing)).flat();
        const log = await wholeLog(services[0] as Service, tokens[0] as string);
        assert.equal(log.length, CLIENTS * WRITES_EACH);
        assert.deepEqual(log.map(keyOf).sort(), acknowledged.sort());
        for (const follower of [followers[0], followers[1], resumed]) {
          await follower?.until(
            () =>
              (follower?.events.length ?? 0) >=
              log.length - (follower === resumed ? kept.length : 0),
            30_000,
          );
        }
        assertInOrderOnce(followers[0]?.events ?? [], log);
        assertInOrderOnce(followers[1]?.events ?? [], log);
        assertInOrderOnce([...kept, ...resumed.events], log);
        // The log replayed is the catalogue.
        const replayed = new Map<number, Book>();
        for (const e of log) {
          if (e.book === null) replayed.delete(e.id);
          else replayed.set(e.id, e.book);
        }
        const books = await request<Book[]>(services[0] as Service, "GET", "/books", tokens[0]);
        assert.deepEqual(
          books.body.data,
          [...replayed.values()].sort((a, b) => a.id - b.id),
        );
        for (const follower of [...followers, resumed]) follower?.close();
      } finally {
        for (const service of services) await service.stop();
      }
    });

    test("kill -9 under writes: the log and the catalogue still agree", async () => {
      const service = await startService(env, { direct: true });
      const token = await login(service, CREDENTIALS);
      const before = (await wholeLog(service, token)).length;
      let stopped = false;
      const writes = Array.from({ length: 10 }, async (_, c) => {
        for (let i = 0; !stopped; i++) {
          const book = { title: `k${c} ${i}`, author: "Kill", year: i };
          await request(service, "POST", "/book", token, book).catch(() => (stopped = true));
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 700));
      service.process.kill("SIGKILL");
      stopped = true;
      await Promise.all(writes);
      if (service.process.exitCode === null && service.process.signalCode === null) {
        await new Promise((resolve) => service.process.once("exit", resolve));
      }
      const again = await startService(env);
      try {
        const fresh = await login(again, CREDENTIALS);
        const log = await wholeLog(again, fresh);
        assert.ok(log.length > before, "writes were under way");
        const replayed = new Map<number, Book>();
        for (const e of log) {
          if (e.book === null) replayed.delete(e.id);
          else replayed.set(e.id, e.book);
        }
        const books = await request<Book[]>(again, "GET", "/books", fresh);
        assert.deepEqual(
          books.body.data,
          [...replayed.values()].sort((a, b) => a.id - b.id),
        );
      } finally {
        await again.stop();
      }
    });
  });
}
