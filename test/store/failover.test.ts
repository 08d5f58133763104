// A failover under write load: the primary stopped, the standby promoted, and the same service
// process reaching the new primary through its multi-host DB_URL.
import assert from "node:assert/strict";
import { test } from "node:test";
import { clusterSkipReason, createPrimaryWithStandby } from "../support/clusters.js";
import { describe } from "../support/describe.js";
import { leakedSecrets } from "../support/helpers.js";
import { lostOn, mixedLoad, unexpectedStatuses, writesSucceed } from "../support/load.js";
import { login, request, startService } from "../support/service.js";

const CREDENTIALS = { username: "failover", password: "failover-password" };
const ENV = {
  HOST: "127.0.0.1",
  PORT: "0",
  SECRET_TOKEN: "failover-test-secret-of-at-least-32-bytes",
  AUTH_USERNAME: CREDENTIALS.username,
  AUTH_PASSWORD: CREDENTIALS.password,
  DB_TIMEOUT_SECONDS: "2",
};
const DB_PASSWORD = "failover-db-password";

describe("a failover on PostgreSQL", { skip: clusterSkipReason() }, () => {
  for (const synchronous of [false, true]) {
    const replication = synchronous ? "synchronous" : "asynchronous";
    test(`${replication} standby promoted under write load: 503 at most, then writes succeed with no restart`, async (t) => {
      const pair = await createPrimaryWithStandby({ synchronous });
      const { primary, standby } = pair;
      const hosts = `127.0.0.1:${primary.port},127.0.0.1:${standby.port}`;
      const service = await startService(
        { ...ENV, DB_URL: `postgres://postgres:${DB_PASSWORD}@${hosts}/postgres` },
        { direct: true },
      );
      try {
        const token = await login(service, CREDENTIALS);
        const load = mixedLoad(service, token, 4, "only");
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await primary.stop("immediate");
        await standby.promote();
        // Writes succeed again through the same process, within a few seconds of the promotion.
        const seconds = (await writesSucceed(load, 20_000, 20)) / 1000;
        await load.stop();
        const lost = await lostOn(standby.url(), load.acknowledged);
        t.diagnostic(
          `${replication}: answers ${JSON.stringify([...load.statuses])}; writes again ${seconds} s after the promotion; ${lost} of ${load.acknowledged.length} acknowledged books lost`,
        );
        assert.deepEqual(unexpectedStatuses(load, [201, 503]), []);
        assert.ok((load.statuses.get(201) ?? 0) > 20);
        // A commit waits for a synchronous standby: every 201 survives its promotion.
        if (synchronous) assert.equal(lost, 0);
        assert.equal(service.process.exitCode, null);
        assert.equal((await request(service, "GET", "/ready")).status, 200);
        assert.deepEqual(leakedSecrets(service.output(), ENV, [token, DB_PASSWORD]), []);
      } finally {
        await service.stop();
        await pair.drop();
      }
    });
  }
});
