// PostgreSQL restarted, stopped for 30 s, and its connections terminated under mixed load,
// straight and through pgbouncer in either mode: the process never exits, requests answer 503
// (never 500) while PostgreSQL is away, it serves again within 5 s of PostgreSQL's return, and
// every acknowledged write is still there. The three routes are three services, each on a
// database of its own in one cluster, through the same faults at once: one outage of 30 s,
// not three.
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
import { login, type Service, startService } from "../support/service.js";

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

const ROUTES = ["straight", "pgbouncer, session mode", "pgbouncer, transaction mode"] as const;
type Route = (typeof ROUTES)[number];
/** Each route's service under this many clients, three to each of its two connections. */
const CLIENTS = 6;

/** The database's URL for the service: straight, or through a pgbouncer in front of it. */
async function routeTo(
  cluster: Cluster,
  route: Route,
  database: string,
): Promise<[string, Pgbouncer?]> {
  if (route === "straight") return [cluster.url(database)];
  const poolMode = route === "pgbouncer, session mode" ? "session" : "transaction";
  const pgbouncer = await startPgbouncer({
    poolMode,
    server: { host: "127.0.0.1", port: cluster.port },
  });
  return [pgbouncer.url(database), pgbouncer];
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
        WHERE datname LIKE 'catalogue%' AND pid <> pg_backend_pid()`);
    },
  ],
];

const skip = clusterSkipReason() || pgbouncerSkipReason();

/** One route's service under load, on a database of its own. */
interface Served {
  route: Route;
  database: string;
  env: Record<string, string>;
  service: Service;
  token: string;
  load: Load;
}

/**
 * Starts one route's service under load, on a database of its own; each thing started is
 * stopped by `cleanup`, last first, whatever fails after it.
 */
async function serveRoute(
  cluster: Cluster,
  route: Route,
  n: number,
  cleanup: (() => Promise<unknown>)[],
): Promise<Served> {
  const database = `catalogue${n}`;
  await cluster.psql(`CREATE DATABASE ${database}`);
  const [plainUrl, pgbouncer] = await routeTo(cluster, route, database);
  if (pgbouncer !== undefined) cleanup.push(() => pgbouncer.stop());
  const url = new URL(plainUrl);
  url.password = DB_PASSWORD;
  const env = {
    ...ENV,
    DB_URL: url.toString(),
    DB_PREPARED_STATEMENTS: String(route !== "pgbouncer, transaction mode"),
  };
  const service = await startService(env, { direct: true });
  cleanup.push(() => service.stop());
  const token = await login(service, CREDENTIALS);
  const load = mixedLoad(service, token, CLIENTS);
  cleanup.push(() => load.stop());
  return { route, database, env, service, token, load };
}

/** Waits until writes succeed again through every route; the time each took. */
const everyRouteWrites = (served: Served[]) =>
  Promise.all(
    served.map(async ({ route, load }) => {
      try {
        return await writesSucceed(load, BACK_WITHIN_MS);
      } catch (error) {
        throw new Error(`${route}: ${(error as Error).message}`);
      }
    }),
  );

/** Runs each stop, last first, whatever the others do; then fails with the first failure. */
async function stopAll(stops: (() => Promise<unknown>)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const stop of stops.reverse()) await stop().catch((error) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}

describe("PostgreSQL restarted, stopped and cut off under mixed load", { skip }, () => {
  test("straight and through pgbouncer in either mode: 503 while away, never 500 nor an exit, back within 5 s, nothing lost", async (t) => {
    const cluster = await createCluster();
    const cleanup: (() => Promise<unknown>)[] = [() => cluster.drop()];
    t.after(() => stopAll(cleanup));
    const served: Served[] = [];
    for (const [n, route] of ROUTES.entries()) {
      served.push(await serveRoute(cluster, route, n, cleanup));
    }
    await everyRouteWrites(served);
    for (const [fault, inject] of FAULTS) {
      await inject(cluster);
      const ms = await everyRouteWrites(served);
      t.diagnostic(`${fault}: writes again ${ms.join(", ")} ms after PostgreSQL's return`);
    }
    for (const { route, database, env, service, token, load } of served) {
      await load.stop();
      t.diagnostic(`${route}: answers ${JSON.stringify([...load.statuses])}`);
      assert.deepEqual(unexpectedStatuses(load, [200, 201, 503]), [], route);
      assert.equal(service.process.exitCode, null, `${route}: the process exited`);
      assert.equal(await lostOn(cluster.url(database), load.acknowledged), 0, route);
      assert.deepEqual(leakedSecrets(service.output(), env, [token, DB_PASSWORD]), [], route);
    }
  });
});
