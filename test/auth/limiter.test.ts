// Failed logins limited across instances through Redis (RATE_LIMIT_REDIS_URL).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { Redis } from "ioredis";
import { createRedisLoginLimiter } from "../../src/auth/redis-login-limiter.js";
import { Messages } from "../../src/http/envelope.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call, TEST_PASSWORD, TEST_USERNAME } from "../support/helpers.js";
import { freePort } from "../support/service.js";

const REDIS_URL = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";

async function redisSkipReason(): Promise<string | false> {
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    await redis.ping();
    return false;
  } catch (error) {
    const reason = `Redis tests skipped: no Redis at TEST_REDIS_URL (${(error as Error).message})`;
    if (process.env.CI === "true") throw new Error(`${reason}; under CI=true they must run`);
    return reason;
  } finally {
    redis.disconnect();
  }
}

describe("failed logins shared through Redis", { skip: await redisSkipReason() }, () => {
  test("failures at two instances add up: both answer 429 with Retry-After; others still log in", async () => {
    const prefix = `book-catalogue-test:${randomBytes(6).toString("hex")}:`;
    const instances = await Promise.all(
      [0, 1].map(() =>
        buildTestApp({ limiter: createRedisLoginLimiter(REDIS_URL, 4, 60, prefix) }),
      ),
    );
    const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
    const bad = { username: TEST_USERNAME, password: "guess" };
    const good = { username: TEST_USERNAME, password: TEST_PASSWORD };
    const attacker = "203.0.113.50";
    try {
      for (const app of [a, b, a, b]) {
        assert.equal(
          (await call(app, "POST", "/token", { body: bad, remoteAddress: attacker })).status,
          401,
        );
      }
      for (const app of [a, b]) {
        const answer = await call(app, "POST", "/token", { body: good, remoteAddress: attacker });
        assert.deepEqual(answer.body, {
          status: 429,
          message: Messages.tooManyRequests,
          data: null,
        });
        const retryAfter = Number(answer.headers["retry-after"]);
        assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      }
      const other = await call(b, "POST", "/token", { body: good, remoteAddress: "198.51.100.7" });
      assert.equal(other.status, 200);
    } finally {
      await Promise.all(instances.map((app) => app.close()));
    }
  });

  test("200 parallel wrong logins over two instances: 10 × 401, the rest 429; then the right password is 429 too", async () => {
    const prefix = `book-catalogue-test:${randomBytes(6).toString("hex")}:`;
    const instances = await Promise.all(
      [0, 1].map(() =>
        buildTestApp({ limiter: createRedisLoginLimiter(REDIS_URL, 10, 60, prefix) }),
      ),
    );
    const attacker = { remoteAddress: "203.0.113.52" };
    try {
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          call(instances[i % 2] as (typeof instances)[0], "POST", "/token", {
            ...attacker,
            body: { username: TEST_USERNAME, password: `guess-${i}` },
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      assert.equal(statuses.filter((status) => status === 401).length, 10);
      assert.equal(statuses.filter((status) => status === 429).length, 190);
      for (const answer of answers.filter((a) => a.status === 429)) {
        const retryAfter = Number(answer.headers["retry-after"]);
        assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      }
      const good = { username: TEST_USERNAME, password: TEST_PASSWORD };
      for (const app of instances) {
        assert.equal((await call(app, "POST", "/token", { ...attacker, body: good })).status, 429);
      }
    } finally {
      await Promise.all(instances.map((app) => app.close()));
    }
  });

  test("failures of one account name add up over instances and clients; other names go on", async () => {
    const prefix = `book-catalogue-test:${randomBytes(6).toString("hex")}:`;
    const instances = await Promise.all(
      [0, 1].map(() =>
        buildTestApp({ limiter: createRedisLoginLimiter(REDIS_URL, 4, 60, prefix) }),
      ),
    );
    const login = (i: number, username: string) =>
      call(instances[i % 2] as (typeof instances)[0], "POST", "/token", {
        body: { username, password: "guess" },
        remoteAddress: `203.0.113.${60 + i}`,
      });
    try {
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await login(i, "some-account")).status);
      assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429]);
      assert.equal((await login(7, "another-account")).status, 401);
    } finally {
      await Promise.all(instances.map((app) => app.close()));
    }
  });

  test("successful logins do not use up the limit", async () => {
    const prefix = `book-catalogue-test:${randomBytes(6).toString("hex")}:`;
    const app = await buildTestApp({ limiter: createRedisLoginLimiter(REDIS_URL, 3, 60, prefix) });
    const client = { remoteAddress: "203.0.113.53" };
    const good = { username: TEST_USERNAME, password: TEST_PASSWORD };
    try {
      const logins = await Promise.all(
        Array.from({ length: 20 }, () => call(app, "POST", "/token", { ...client, body: good })),
      );
      // Parallel successes may briefly hold every slot; each gives its slot back afterwards.
      assert.ok(logins.some((answer) => answer.status === 200));
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const bad = { username: TEST_USERNAME, password: "guess" };
        statuses.push((await call(app, "POST", "/token", { ...client, body: bad })).status);
      }
      assert.deepEqual(statuses, [401, 401, 401, 429]);
    } finally {
      await app.close();
    }
  });

  test("the window ends: a correct login works again afterwards", async () => {
    const prefix = `book-catalogue-test:${randomBytes(6).toString("hex")}:`;
    const app = await buildTestApp({ limiter: createRedisLoginLimiter(REDIS_URL, 2, 1, prefix) });
    const client = { remoteAddress: "203.0.113.51" };
    try {
      for (let i = 0; i < 2; i++) {
        await call(app, "POST", "/token", { ...client, body: { username: "x", password: "y" } });
      }
      const good = { username: TEST_USERNAME, password: TEST_PASSWORD };
      assert.equal((await call(app, "POST", "/token", { ...client, body: good })).status, 429);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      assert.equal((await call(app, "POST", "/token", { ...client, body: good })).status, 200);
    } finally {
      await app.close();
    }
  });

  test("Redis unreachable: logins answer 503 Service unavailable, never unlimited", async () => {
    const app = await buildTestApp({
      // A port nothing listens on: the connection is refused.
      limiter: createRedisLoginLimiter(`redis://127.0.0.1:${await freePort()}`, 2, 60),
    });
    try {
      const answer = await call(app, "POST", "/token", { body: { username: "x", password: "y" } });
      assert.deepEqual(answer.body, {
        status: 503,
        message: Messages.serviceUnavailable,
        data: null,
      });
    } finally {
      await app.close();
    }
  });
});
