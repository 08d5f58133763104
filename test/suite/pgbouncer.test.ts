// The pgbouncer of the tests pools for the PostgreSQL of TEST_DATABASE_URL, wherever that is:
// its host, port and user, never a fixed 127.0.0.1:5432.
import assert from "node:assert/strict";
import { test } from "node:test";
import { describe } from "../support/describe.js";
import { withEnv } from "../support/env.js";
import { freshPostgresDatabase, storesUnderTest } from "../support/helpers.js";
import { pgConnect } from "../support/pg.js";
import {
  pgbouncerIni,
  pgbouncerSkipReason,
  startPgbouncer,
  testDatabaseServer,
} from "../support/pgbouncer.js";

const postgres = (await storesUnderTest()).find((k) => k.name === "postgres");
const skip = postgres?.skip || pgbouncerSkipReason();

describe("pgbouncer in front of TEST_DATABASE_URL", () => {
  test("its server is TEST_DATABASE_URL's host, port and user, with PostgreSQL's defaults", () => {
    assert.deepEqual(testDatabaseServer("postgres://alice:s%40cret@db.example:5499/books"), {
      host: "db.example",
      port: 5499,
      user: "alice",
      password: "s@cret",
    });
    assert.deepEqual(testDatabaseServer("postgres://[::1]/test"), {
      host: "::1",
      port: 5432,
      user: "postgres",
      password: "",
    });
  });

  test("its pgbouncer.ini sends every database to TEST_DATABASE_URL's host and port", async () => {
    const ini = await withEnv({ TEST_DATABASE_URL: "postgres://alice@db.example:5499/t" }, () =>
      pgbouncerIni("/dir", 6543, { poolMode: "transaction" }),
    );
    assert.match(ini, /^\* = host=db\.example port=5499$/m);
    assert.match(ini, /^admin_users = alice$/m);
    assert.match(ini, /^listen_port = 6543$/m);
    // A server a test gives (a cluster of its own) still wins.
    const own = pgbouncerIni("/dir", 6543, {
      poolMode: "session",
      server: { host: "127.0.0.1", port: 24_000 },
    });
    assert.match(own, /^\* = host=127\.0\.0\.1 port=24000$/m);
    assert.match(own, /^admin_users = postgres$/m);
  });

  test("a query through it runs on TEST_DATABASE_URL's server, as its user", { skip }, async () => {
    const pgbouncer = await startPgbouncer({ poolMode: "transaction" });
    const database = await freshPostgresDatabase();
    try {
      const db = await pgConnect(pgbouncer.url(database.name));
      try {
        const [row] = await db.sql<{ port: string; user: string }>`
          SELECT current_setting('port') AS port, current_user AS user`;
        const server = testDatabaseServer();
        assert.deepEqual(row, { port: String(server.port), user: server.user });
      } finally {
        await db.end();
      }
    } finally {
      await pgbouncer.stop();
      await database.drop();
    }
  });
});
