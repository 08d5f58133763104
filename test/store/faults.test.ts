// Faults while serving: PostgreSQL going away and coming back, and SIGTERM under load.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Messages } from "../../src/http/envelope.js";
import type { Book } from "../../src/rules/book.js";
import { describe } from "../support/describe.js";
import { freshPostgresSchema, leakedSecrets, storesUnderTest } from "../support/helpers.js";
import { login, request, startService } from "../support/service.js";

const CREDENTIALS = { username: "faults", password: "faults-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: "faults-test-secret-of-at-least-32-bytes",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
};

/** A TCP proxy to PostgreSQL that the test can cut (every connection dropped and refused). */
async function postgresProxy(target: URL) {
  let open = true;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      open = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const kinds = await storesUnderTest();
const postgresSkip = kinds.find((k) => k.name === "postgres")?.skip ?? "no PostgreSQL";

describe("PostgreSQL goes away while serving", { skip: postgresSkip }, () => {
  test("503 and /ready 503 while it is away, the process stays up, and it recovers by itself", async () => {
    const schema = await freshPostgresSchema();
    const direct = new URL(schema.dbUrl);
    const proxy = await postgresProxy(direct);
    const viaProxy = new URL(schema.dbUrl);
    viaProxy.port = String(proxy.port);
    const service = await startService({ ...ENV, DB_URL: viaProxy.toString() }, { direct: true });
    try {
      const token = await login(service, CREDENTIALS);
      const acknowledged: Book[] = [];
      for (let i = 0; i < 20; i++) {
        const answer = await request(service, "POST", "/book", token, {
          title: `Before ${i}`,
          author: "A",
          year: i,
        });
        assert.equal(answer.status, 201);
        acknowledged.push(answer.body.data as Book);
      }

      proxy.cut();
      for (const [method, path] of [
        ["GET", "/books"],
        ["GET", `/book/${acknowledged[0]?.id}`],
        ["POST", "/book"],
        ["PUT", `/book/${acknowledged[1]?.id}`],
        ["DELETE", `/book/${acknowledged[2]?.id}`],
        ["GET", "/ready"],
      ] as const) {
        const body = method === "POST" ? { title: "During", author: "A", year: 1 } : { year: 1 };
        const answer = await request(
          service,
          method,
          path,
          token,
          method === "GET" ? undefined : body,
        );
        assert.equal(answer.status, 503, `${method} ${path}`);
        assert.equal(answer.body.message, Messages.serviceUnavailable);
      }
      assert.equal((await request(service, "GET", "/health")).status, 200, "the process is up");
      assert.equal(service.process.exitCode, null);

      proxy.restore();
      const deadline = Date.now() + 15_000;
      while ((await request(service, "GET", "/ready")).status !== 200) {
        assert.ok(Date.now() < deadline, "not ready again within 15 s");
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const listing = await request(service, "GET", "/books", token);
      assert.equal(listing.status, 200);
      for (const book of acknowledged.slice(3)) {
        assert.deepEqual(
          (listing.body.data as Book[]).find((b) => b.id === book.id),
          book,
        );
      }
      assert.equal(
        (await request(service, "POST", "/book", token, { title: "After", author: "A", year: 1 }))
          .status,
        201,
      );
      const env = { ...ENV, DB_URL: viaProxy.toString() };
      assert.deepEqual(leakedSecrets(service.output(), env, [token]), []);
    } finally {
      await service.stop();
      await proxy.close();
      await schema.drop();
    }
  });
});

for (const kind of kinds) {
  describe(`SIGTERM under load on ${kind.name}`, { skip: kind.skip }, () => {
    test("in-flight requests finish, the process exits 0, and every 201 it sent is stored", async () => {
      const dir = mkdtempSync(join(tmpdir(), "books-term-"));
      const schema = kind.name === "postgres" ? await freshPostgresSchema() : undefined;
      const dbUrl = schema?.dbUrl ?? `sqlite:${join(dir, "books.db")}`;
      try {
        const service = await startService({ ...ENV, DB_URL: dbUrl }, { direct: true });
        const token = await login(service, CREDENTIALS);
        const created: Book[] = [];
        let stopped = false;
        let failures = 0;
        const workers = Array.from({ length: 16 }, async (_, w) => {
          for (let n = 0; !stopped; n++) {
            try {
              const answer = await request(service, "POST", "/book", token, {
                title: `w${w}-${n}`,
                author: "A",
                year: 1,
              });
              if (answer.status === 201) created.push(answer.body.data as Book);
              else failures += 1;
            } catch {
              return; // refused: the server stopped accepting
            }
          }
        });
        await new Promise((resolve) => setTimeout(resolve, 500));
        const exited = service.stop("SIGTERM");
        const code = await exited;
        stopped = true;
        await Promise.all(workers);
        assert.equal(code, 0);
        assert.equal(failures, 0, "every answered request succeeded");
        assert.ok(created.length > 0);
        assert.match(service.output(), /"msg":"stopped"/);
        assert.doesNotMatch(
          service.output(),
          /did not finish in time/,
          "in-flight requests finished",
        );

        const again = await startService({ ...ENV, DB_URL: dbUrl }, { direct: true });
        const stored = new Map(
          (
            (await request(again, "GET", "/books", await login(again, CREDENTIALS))).body
              .data as Book[]
          ).map((b) => [b.id, b]),
        );
        await again.stop();
        const env = { ...ENV, DB_URL: dbUrl };
        assert.deepEqual(leakedSecrets(`${service.output()}${again.output()}`, env, [token]), []);
        for (const book of created) assert.deepEqual(stored.get(book.id), book);
      } finally {
        await schema?.drop();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
