// PostgreSQL restarted, stopped for 30 s, and its connections terminated under mixed load,
// straight and through pgbouncer in either mode: the process never exits, requests answer 503
// (never 500) while PostgreSQL is away, it serves again within 5 s of PostgreSQL's return, and
// every acknowledged write is still there.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Cluster, clusterSkipReason, createCluster } from "../support/clusters.js";
import { describe } from "../support/describe.js";
import { leakedSecrets } from "../support/helpers.js";
import {
  type Load,
  lostOn,
  mixedLoad,
  unexpectedStatuses,
  writesSucceed,
} from "../support/load.js";
import { type Pgbouncer, pgbouncerSkipReason, startPgbouncer } from "../support/pgbouncer.js";
import { login, startService } from "../support/service.js";

const CREDENTIALS = { username: "restarts", password: "restarts-password" };
const DB_PASSWORD = "restarts-db-password";
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: "restarts-test-secret-of-at-least-32-bytes",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  DB_TIMEOUT_SECONDS: "2",
};
/** After PostgreSQL is back, writes succeed within this. */
const BACK_WITHIN_MS = 5_000;

type Route = "straight" | "pgbouncer, session mode" | "pgbouncer, transaction mode";

/** The database's URL for the service: straight, or through a pgbouncer in front of it. */
async function routeTo(cluster: Cluster, route: Route): Promise<[string, Pgbouncer?]> {
  if (route === "straight") return [cluster.url("catalogue")];
  const poolMode = route === "pgbouncer, session mode" ? "session" : "transaction";
  const pgbouncer = await startPgbouncer({
    poolMode,
    server: { host: "127.0.0.1", port: cluster.port },
  });
  return [pgbouncer.url("catalogue"), pgbouncer];
}

/** The faults, each with PostgreSQL's return at the end of it. */
const FAULTS: [string, (cluster: Cluster) => Promise<void>][] = [
  ["restart -m fast", (cluster) => cluster.restart("fast")],
  ["restart -m fast, again", (cluster) => cluster.restart("fast")],
  ["restart -m immediate", (cluster) => cluster.restart("immediate")],
  [
    "stopped for 30 s",
    async (cluster) => {
      await cluster.stop("fast");
      await new Promise((resolve) => setTimeout(resolve, 30_000));
      await cluster.start();
    },
  ],
  [
    "every connection terminated",
    async (cluster) => {
      await cluster.psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = 'catalogue' AND pid <> pg_backend_pid()`);
    },
  ],
];

const skip = clusterSkipReason() || pgbouncerSkipReason();

describe("PostgreSQL restarted, stopped and cut off under mixed load", { skip }, () => {
  for (const route of [
    "straight",
    "pgbouncer, session mode",
    "pgbouncer, transaction mode",
  ] as const) {
    test(`${route}: 503 while away, never 500 nor an exit, back within 5 s, nothing lost`, async (t) => {
      const cluster = await createCluster();
      await cluster.psql("CREATE DATABASE catalogue");
      const [plainUrl, pgbouncer] = await routeTo(cluster, route);
      const url = new URL(plainUrl);
      url.password = DB_PASSWORD;
      const env = {
        ...ENV,
        DB_URL: url.toString(),
        DB_PREPARED_STATEMENTS: String(route !== "pgbouncer, transaction mode"),
      };
      const service = await startService(env, { direct: true });
      let load: Load | undefined;
      try {
        const token = await login(service, CREDENTIALS);
        load = mixedLoad(service, token, 6);
        await writesSucceed(load, BACK_WITHIN_MS);
        for (const [fault, inject] of FAULTS) {
          await inject(cluster);
          const ms = await writesSucceed(load, BACK_WITHIN_MS);
          t.diagnostic(`${fault}: writes again ${ms} ms after PostgreSQL's return`);
        }
        await load.stop();
        t.diagnostic(`answers: ${JSON.stringify([...load.statuses])}`);
        assert.deepEqual(unexpectedStatuses(load, [200, 201, 503]), []);
        assert.equal(service.process.exitCode, null, "the process exited");
        assert.equal(await lostOn(cluster.url("catalogue"), load.acknowledged), 0);
        assert.deepEqual(leakedSecrets(service.output(), env, [token, DB_PASSWORD]), []);
      } finally {
        await load?.stop();
        await service.stop();
        await pgbouncer?.stop();
        await cluster.drop();
      }
    });
  }
});
