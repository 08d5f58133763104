// Where failed logins are counted, chosen in one place for every kind of process: in Redis
// when RATE_LIMIT_REDIS_URL is set (shared by every instance); else in the primary process,
// for the workers of WORKERS above 1; else in this process's memory.
import type { Config } from "../config.js";
import { createMemoryLoginLimiter, type LoginLimiter } from "./login-limiter.js";
import { createPrimaryLoginLimiter, serveLoginLimiter } from "./primary-login-limiter.js";

type LimiterConfig = Pick<Config, "rateLimitRedisUrl" | "loginMaxFailures" | "loginWindowSeconds">;

/** The limiter a serving process uses; `inWorker` when a primary keeps the counts. */
export async function openLoginLimiter(
  config: LimiterConfig,
  inWorker: boolean,
): Promise<LoginLimiter> {
  const { loginMaxFailures, loginWindowSeconds, rateLimitRedisUrl } = config;
  if (rateLimitRedisUrl !== undefined) {
    // The Redis client is loaded only when configured (its memory: see docs/performance.md).
    const { createRedisLoginLimiter } = await import("./redis-login-limiter.js");
    return createRedisLoginLimiter(rateLimitRedisUrl, loginMaxFailures, loginWindowSeconds);
  }
  if (inWorker) return createPrimaryLoginLimiter();
  return createMemoryLoginLimiter(loginMaxFailures, loginWindowSeconds);
}

/** In the primary of WORKERS above 1: keeps the counts its workers ask for, unless Redis does. */
export function keepWorkersLoginCounts(config: LimiterConfig): void {
  if (config.rateLimitRedisUrl !== undefined) return;
  serveLoginLimiter(createMemoryLoginLimiter(config.loginMaxFailures, config.loginWindowSeconds));
}
