import { Redis } from "ioredis";
import { StoreUnavailableError } from "../store/store.js";
import type { LoginLimiter } from "./login-limiter.js";

/**
 * The same limit shared by every instance through Redis: one counter per client and window
 * (INCR, with the expiry set by the first failure). When Redis cannot be reached, logins
 * answer 503 rather than go unlimited.
 */
export function createRedisLoginLimiter(
  url: string,
  maxFailures: number,
  windowSeconds: number,
  prefix = "book-catalogue:login-failures:",
): LoginLimiter {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: true,
  });
  // Connection trouble is reported per request, as a 503.
  redis.on("error", () => {});
  const guarded = async <T>(operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (error) {
      throw new StoreUnavailableError({ cause: error });
    }
  };
  return {
    retryAfter: (client) =>
      guarded(async () => {
        const key = prefix + client;
        const [failures, ttlMs] = await Promise.all([redis.get(key), redis.pttl(key)]);
        if (Number(failures ?? 0) < maxFailures) return 0;
        return Math.max(1, Math.ceil(ttlMs / 1000));
      }),
    recordFailure: (client) =>
      guarded(async () => {
        const key = prefix + client;
        await redis
          .multi()
          .incr(key)
          .pexpire(key, windowSeconds * 1000, "NX")
          .exec();
      }),
    close: async () => {
      redis.disconnect();
    },
  };
}
