// WORKERS=2, and two instances on one database: several processes behave as one service.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import type { Book } from "../../src/rules/book.js";
import { until } from "../backup/catalogues.js";
import { describe } from "../support/describe.js";
import { freshPostgresSchema, storesUnderTest } from "../support/helpers.js";
import { pgConnect } from "../support/pg.js";
import {
  freePort,
  killIfAlive,
  listeners,
  type Service,
  spawnNpmStart,
  startExpectingFailure,
  startService,
} from "../support/service.js";

const CREDENTIALS = { username: "workers", password: "workers-password" };
const BOOK = { title: "Dune", author: "Frank Herbert", year: 1965 };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  WORKERS: "2",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  LOG_LEVEL: "info",
  LOGIN_MAX_FAILURES: "3",
};

interface Answer<T> {
  status: number;
  body: { status: number; message: string; data: T };
  /** The worker that answered, from the request id it gave ("w2-…"). */
  worker: string;
}

/**
 * One request on a connection of its own: the primary hands each new connection to the next
 * worker in turn, so requests in a row reach both workers.
 */
function fresh<T = unknown>(
  service: Service,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<Answer<T>> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      `${service.url}${path}`,
      { method, agent: false, headers: token ? { authorization: token } : {} },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(text),
            worker: /^(w\d+)-/.exec(String(response.headers["x-request-id"]))?.[1] ?? "",
          }),
        );
      },
    );
    sent.on("error", reject);
    sent.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function tokenOf(service: Service): Promise<string> {
  const answer = await fresh<{ token: string }>(service, "POST", "/token", undefined, CREDENTIALS);
  assert.equal(answer.status, 200);
  return answer.body.data.token;
}

/** Waits until `pattern` shows in the service's output. */
async function waitFor(service: Service, pattern: RegExp, count = 1): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((service.output().match(new RegExp(pattern, "g")) ?? []).length < count) {
    assert.ok(Date.now() < deadline, `no ${pattern} in:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves once both workers listen (startService returns at the first). */
const bothListening = (service: Service) => waitFor(service, /Server listening at/, 2);

/**
 * Removes the writer's folder and makes it again, empty, as it was: /ready must answer 503
 * until the writer's socket is back, then 200, and both workers write again.
 */
async function folderMadeAgain(service: Service, temporary: string): Promise<void> {
  const token = await tokenOf(service);
  assert.equal((await fresh(service, "POST", "/book", token, BOOK)).status, 201);
  assert.equal((await fresh(service, "GET", "/ready")).status, 200);
  const [name] = readdirSync(temporary) as [string];
  const folder = join(temporary, name);
  const mode = statSync(folder).mode & 0o777;
  rmSync(folder, { recursive: true });
  mkdirSync(folder, { mode });
  // Both workers say so until the writer's check (every 5 s) makes the socket again.
  const socketBack = () => readdirSync(folder).includes("writes.sock");
  const notReady = new Set<string>();
  while (!socketBack()) {
    const answer = await fresh(service, "GET", "/ready");
    if (socketBack()) break;
    assert.equal(answer.status, 503, "not ready while the writer's socket is gone");
    notReady.add(answer.worker);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(notReady.size > 0, "/ready was asked while the socket was gone");
  await waitFor(service, /writes\.sock was gone: listening there again/);
  const ready = new Set<string>();
  const wrote = new Set<string>();
  // New connections go to the workers in turn: two of each kind reach both.
  for (let tries = 0; tries < 10 && ready.size < 2; tries++) {
    const answer = await fresh(service, "GET", "/ready");
    assert.equal(answer.status, 200);
    ready.add(answer.worker);
  }
  for (let tries = 0; tries < 10 && wrote.size < 2; tries++) {
    const answer = await fresh(service, "POST", "/book", token, { ...BOOK, year: tries });
    assert.equal(answer.status, 201);
    wrote.add(answer.worker);
  }
  assert.equal(ready.size, 2, "both workers ready");
  assert.equal(wrote.size, 2, `both workers write, with no restart: ${[...wrote]}`);
}

for (const kind of await storesUnderTest()) {
  describe(`several processes on ${kind.name}`, { skip: kind.skip }, () => {
    let dir: string;
    let schema: { dbUrl: string; drop(): Promise<void> } | undefined;
    let dbUrl: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "books-workers-"));
      schema = kind.name === "postgres" ? await freshPostgresSchema() : undefined;
      dbUrl = schema?.dbUrl ?? `sqlite:${join(dir, "books.db")}`;
    });
    after(async () => {
      await schema?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    /** The service, both workers listening, with a temporary folder (TMPDIR) of its own. */
    async function startWithOwnTemporary() {
      const temporary = mkdtempSync(join(dir, "tmp-"));
      const service = await startService(
        { ...ENV, DB_URL: dbUrl, TMPDIR: temporary },
        { direct: true },
      );
      await bothListening(service);
      return { service, temporary };
    }

    test("both workers answer; a write through one is listed at once by the other", async () => {
      const service = await startService({ ...ENV, DB_URL: dbUrl }, { direct: true });
      await bothListening(service);
      const token = await tokenOf(service);
      // A listing through each worker first, so each holds the page in its cache.
      const seen = new Set<string>();
      for (let i = 0; i < 4; i++) seen.add((await fresh(service, "GET", "/books", token)).worker);
      assert.deepEqual([...seen].sort(), ["w1", "w2"]);
      // Each round, a create and an update, each listed at once through both workers: the
      // primary hands new connections to the workers in turn, so the create goes through one
      // worker and the update through the other.
      const created: Book[] = [];
      const listedBy = new Set<string>();
      const listedEverywhere = async (write: Answer<Book>) => {
        for (let i = 0; i < 2; i++) {
          const list = await fresh<Book[]>(service, "GET", "/books", token);
          listedBy.add(`${write.worker}>${list.worker}`);
          assert.deepEqual(
            list.body.data.slice(-created.length),
            created,
            `listed by ${list.worker} after ${write.worker} wrote`,
          );
        }
      };
      for (let i = 0; i < 10; i++) {
        const write = await fresh<Book>(service, "POST", "/book", token, {
          title: `Book ${i}`,
          author: "Writer",
          year: 2000 + i,
        });
        assert.equal(write.status, 201);
        created.push(write.body.data);
        await listedEverywhere(write);
        const update = await fresh<Book>(service, "PUT", `/book/${write.body.data.id}`, token, {
          year: 1900 + i,
        });
        created[created.length - 1] = update.body.data;
        await listedEverywhere(update);
      }
      // Writes went through each worker and were listed by the other.
      assert.ok(listedBy.has("w1>w2") && listedBy.has("w2>w1"), [...listedBy].join(" "));
      // Ids are never handed out twice, whichever worker creates.
      const last = created.at(-1) as Book;
      assert.equal((await fresh(service, "DELETE", `/book/${last.id}`, token)).status, 200);
      const next = await fresh<Book>(service, "POST", "/book", token, {
        title: "After",
        author: "Writer",
        year: 2001,
      });
      const again = await fresh<Book>(service, "POST", "/book", token, {
        title: "After again",
        author: "Writer",
        year: 2001,
      });
      assert.notEqual(next.worker, again.worker);
      assert.ok(next.body.data.id > last.id && again.body.data.id > next.body.data.id);
      assert.equal(await service.stop(), 0);
    });

    test("every answer of a write crosses from the writer: a missing book is 404 through both workers", async () => {
      const service = await startService({ ...ENV, DB_URL: dbUrl }, { direct: true });
      await bothListening(service);
      const token = await tokenOf(service);
      // Three requests a round: each worker gets both kinds (connections go to them in turn).
      const answered = new Set<string>();
      for (let i = 0; i < 2; i++) {
        for (const method of ["PUT", "DELETE", "PUT"]) {
          const body = method === "PUT" ? { year: 2000 } : undefined;
          const answer = await fresh(service, method, "/book/999999", token, body);
          answered.add(`${answer.worker} ${method} ${answer.status}`);
        }
      }
      assert.deepEqual(
        [...answered].sort(),
        ["w1 DELETE 404", "w1 PUT 404", "w2 DELETE 404", "w2 PUT 404"],
        service.output(),
      );
      assert.equal(await service.stop(), 0);
    });

    test("a create past the largest id answers 503 through both workers; nothing is written", async () => {
      const own = kind.name === "postgres" ? await freshPostgresSchema() : undefined;
      const ownUrl = own?.dbUrl ?? `sqlite:${join(dir, "largest-id.db")}`;
      let service: Service | undefined;
      try {
        // The catalogue made by the service (one process is enough), then its next id set to
        // the largest there is.
        await (
          await startService({ ...ENV, WORKERS: "1", DB_URL: ownUrl }, { direct: true })
        ).stop();
        await setNextId(ownUrl, Number.MAX_SAFE_INTEGER);
        service = await startService({ ...ENV, DB_URL: ownUrl }, { direct: true });
        await bothListening(service);
        const token = await tokenOf(service);
        const answers: Answer<Book | null>[] = [];
        for (let i = 0; i < 4; i++) {
          answers.push(await fresh<Book | null>(service, "POST", "/book", token, BOOK));
        }
        const [first, ...rest] = answers as [Answer<Book | null>, ...Answer<Book | null>[]];
        assert.equal(first.status, 201);
        assert.equal(first.body.data?.id, Number.MAX_SAFE_INTEGER);
        for (const answer of rest) {
          assert.deepEqual(answer.body, {
            status: 503,
            message: "Service unavailable",
            data: null,
          });
        }
        assert.deepEqual(new Set(rest.map((answer) => answer.worker)), new Set(["w1", "w2"]));
        const listed = await fresh<Book[]>(service, "GET", "/books", token);
        assert.equal(listed.status, 200);
        assert.deepEqual(listed.body.data, [first.body.data]);
      } finally {
        await service?.stop();
        await own?.drop();
      }
    });

    test("two instances on one database: a write through one is listed at once by the other", async () => {
      const env = { ...ENV, DB_URL: dbUrl, WORKERS: "1", SECRET_TOKEN: "s".repeat(32) };
      const [one, other] = [
        await startService(env, { direct: true }),
        await startService(env, { direct: true }),
      ];
      const token = await tokenOf(one);
      const before = (await fresh<Book[]>(other, "GET", "/books", token)).body.data;
      for (let i = 0; i < 5; i++) {
        const [writer, reader] = i % 2 === 0 ? [one, other] : [other, one];
        // The reader has the listing in its cache before the write.
        await fresh(reader, "GET", "/books", token);
        const write = await fresh<Book>(writer, "POST", "/book", token, {
          title: `Instance ${i}`,
          author: "Writer",
          year: 1990 + i,
        });
        const listed = (await fresh<Book[]>(reader, "GET", "/books", token)).body.data;
        assert.deepEqual(listed.at(-1), write.body.data);
        assert.equal(listed.length, before.length + i + 1);
      }
      assert.equal(await one.stop(), 0);
      assert.equal(await other.stop(), 0);
    });

    test("failed logins count across workers: the limit is the service's, not each worker's", async () => {
      const service = await startService({ ...ENV, DB_URL: dbUrl }, { direct: true });
      await bothListening(service);
      const wrong = { ...CREDENTIALS, password: "wrong" };
      const failures = [];
      for (let i = 0; i < 3; i++)
        failures.push(await fresh(service, "POST", "/token", undefined, wrong));
      assert.deepEqual(
        failures.map((f) => f.status),
        [401, 401, 401],
      );
      assert.deepEqual([...new Set(failures.map((f) => f.worker))].sort(), ["w1", "w2"]);
      // Each worker has seen at most two failures; the service has seen three.
      for (let i = 0; i < 2; i++) {
        const refused = await fresh(service, "POST", "/token", undefined, CREDENTIALS);
        assert.equal(refused.status, 429, `through ${refused.worker}`);
      }
      assert.equal(await service.stop(), 0);
    });

    test("SIGTERM to the primary drains every worker, and it exits 0", async () => {
      const { service, temporary } = await startWithOwnTemporary();
      // On SQLite the workers reach the writer in a folder the primary alone may enter.
      const folders = readdirSync(temporary).map((name) => statSync(join(temporary, name)).mode);
      assert.deepEqual(
        folders.map((mode) => mode & 0o777),
        kind.name === "sqlite" ? [0o700] : [],
      );
      assert.equal(await service.stop("SIGTERM"), 0);
      const output = service.output();
      assert.equal(output.match(/"worker":\d+,"reason":"the primary is stopping"/g)?.length, 2);
      assert.equal(output.match(/"worker":\d+,"msg":"stopped"/g)?.length, 2);
      assert.deepEqual(readdirSync(temporary), [], "nothing is left in the temporary folder");
    });

    test("SIGTERM while the workers are starting: each stops once it serves; none is killed", async () => {
      const { child, output, exited } = spawnNpmStart({ ...ENV, DB_URL: dbUrl }, { direct: true });
      try {
        // As soon as the primary has forked both workers, before either listens.
        const children = `/proc/${child.pid}/task/${child.pid}/children`;
        await until(() => readFileSync(children, "utf8").trim().split(" ").length >= 2, 5);
        assert.doesNotMatch(output(), /Server listening at/);
        child.kill("SIGTERM");
        assert.equal(await exited, 0);
        assert.equal(output().match(/"worker":\d+,"msg":"stopped"/g)?.length, 2, output());
      } finally {
        // A worker whose primary is gone exits by itself (node:cluster).
        child.kill("SIGKILL");
      }
    });

    test("a worker that begins shutting down stops them all: no worker goes on alone", async () => {
      const service = await startService({ ...ENV, DB_URL: dbUrl }, { direct: true });
      await bothListening(service);
      const [first] = listeners(service);
      process.kill(first?.pid as number, "SIGTERM");
      const exited = new Promise((resolve) => service.process.once("exit", resolve));
      assert.equal(await exited, 0);
      assert.equal(service.output().match(/"worker":\d+,"msg":"stopped"/g)?.length, 2);
    });

    test("a worker that dies is replaced, and the service goes on answering", async () => {
      const service = await startService({ ...ENV, DB_URL: dbUrl }, { direct: true });
      await bothListening(service);
      const token = await tokenOf(service);
      const [killed, survivor] = listeners(service);
      process.kill(killed?.pid as number, "SIGKILL");
      await waitFor(service, /worker exited; starting another/);
      await waitFor(service, /Server listening at/, 3);
      const workers = new Set<string>();
      for (let i = 0; i < 4; i++) {
        const answer = await fresh(service, "GET", "/books", token);
        assert.equal(answer.status, 200);
        workers.add(answer.worker);
      }
      assert.deepEqual([...workers].sort(), [`w${survivor?.worker}`, "w3"]);
      assert.equal(await service.stop(), 0);
    });

    if (kind.name === "sqlite") {
      test("the writer's folder emptied under it: a worker that replaces one still writes", async () => {
        const { service, temporary } = await startWithOwnTemporary();
        const token = await tokenOf(service);
        // A cleaner of the temporary directory, say.
        for (const name of readdirSync(temporary))
          rmSync(join(temporary, name), { recursive: true });
        const [killed] = listeners(service);
        process.kill(killed?.pid as number, "SIGKILL");
        await waitFor(service, /Server listening at/, 3);
        // Within the writer's check of its socket (5 s), both workers write again.
        const wrote = new Set<string>();
        for (let tries = 0; wrote.size < 2 && tries < 60; tries++) {
          const answer = await fresh(service, "POST", "/book", token, { ...BOOK, year: tries });
          if (answer.status === 201) wrote.add(answer.worker);
          else assert.equal(answer.status, 503, "refused as unavailable, never otherwise");
          if (wrote.size < 2) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        assert.equal(wrote.size, 2, "both workers write");
        assert.match(service.output(), /writes\.sock was gone: listening there again/);
        assert.equal(await service.stop(), 0);
        assert.deepEqual(readdirSync(temporary), []);
      });

      test("the writer's folder removed and made again empty: /ready 503 until its socket is back, then writes go on", async () => {
        const { service, temporary } = await startWithOwnTemporary();
        try {
          await folderMadeAgain(service, temporary);
          assert.equal(await service.stop(), 0);
        } finally {
          killIfAlive(service.process.pid as number);
        }
      });
    }

    test("workers that keep dying are a crash loop: one plain line, exit 1", async () => {
      const service = await startService({ ...ENV, DB_URL: dbUrl }, { direct: true });
      await bothListening(service);
      const exited = new Promise<number | null>((resolve) =>
        service.process.once("exit", (code) => resolve(code)),
      );
      const killed = new Set<number>();
      while (service.process.exitCode === null) {
        for (const { pid } of listeners(service)) {
          if (killed.has(pid)) continue;
          killed.add(pid);
          killIfAlive(pid);
        }
        assert.ok(killed.size < 20, "the primary went on restarting");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(await exited, 1);
      assert.match(service.output(), /book-catalogue: workers keep exiting \(5 in 60 s/);
    });

    test("metrics on the one metrics port count the requests of every worker", async () => {
      const port = await freePort();
      const service = await startService(
        { ...ENV, DB_URL: dbUrl, METRICS_PORT: String(port) },
        { direct: true },
      );
      await bothListening(service);
      const workers = new Set<string>();
      for (let i = 0; i < 6; i++) workers.add((await fresh(service, "GET", "/health")).worker);
      assert.deepEqual([...workers].sort(), ["w1", "w2"]);
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.match(
        text,
        /book_catalogue_http_requests_total\{method="GET",route="\/health",status="200"\} 6\n/,
      );
      assert.equal(await service.stop(), 0);
    });
  });
}

/** Sets the catalogue's counter behind the service's back: the next book gets `next`. */
async function setNextId(dbUrl: string, next: number): Promise<void> {
  if (dbUrl.startsWith("sqlite:")) {
    const db = new DatabaseSync(dbUrl.slice("sqlite:".length));
    try {
      db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'books'").run(BigInt(next - 1));
      db.prepare(
        "INSERT INTO sqlite_sequence (name, seq) SELECT 'books', ? WHERE changes() = 0",
      ).run(BigInt(next - 1));
    } finally {
      db.close();
    }
    return;
  }
  const db = await pgConnect(dbUrl);
  try {
    await db.sql`SELECT setval(pg_get_serial_sequence('books', 'id'), ${next - 1})`;
  } finally {
    await db.end();
  }
}

describe("WORKERS=2 and the store", () => {
  test("WORKERS=2 with sqlite::memory: is refused: each worker would have a catalogue of its own", async () => {
    const { code, output } = await startExpectingFailure({ ...ENV, DB_URL: "sqlite::memory:" });
    assert.equal(code, 1);
    assert.match(output, /WORKERS above 1 needs a database file or PostgreSQL/);
  });

  test("WORKERS=2 on SQLite, TMPDIR too long for the writer's socket: refused with why, nothing left", async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-workers-"));
    try {
      // The socket would be TMPDIR/book-catalogue-XXXXXX/writes.sock, past Linux's 107 bytes.
      const temporary = join(dir, "t".repeat(100));
      mkdirSync(temporary);
      const { code, output } = await startExpectingFailure({
        ...ENV,
        DB_URL: `sqlite:${join(dir, "books.db")}`,
        TMPDIR: temporary,
      });
      assert.equal(code, 1);
      assert.match(output, /cannot start the SQLite writer: .* set TMPDIR to a shorter folder/);
      // (npm start leaves Node's compile cache there too.)
      const left = readdirSync(temporary).filter((name) => name.startsWith("book-catalogue-"));
      assert.deepEqual(left, [], "the writer's folder is removed");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
