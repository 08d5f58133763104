// Failed logins limited across instances through Redis (RATE_LIMIT_REDIS_URL).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { Redis } from "ioredis";
import { createRedisLoginLimiter } from "../src/auth/redis-login-limiter.js";
import { Messages } from "../src/envelope.js";
import { buildTestApp, call, TEST_PASSWORD, TEST_USERNAME } from "./helpers.js";

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
      limiter: createRedisLoginLimiter("redis://127.0.0.1:1", 2, 60),
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
