import { Redis } from "ioredis";
import { LimiterUnavailableError, type LoginLimiter } from "./login-limiter.js";

// One round trip that counts the attempt and decides on the new count, so no other attempt can
// come between the check and the count. The first attempt of a window sets its expiry in the
// same step. Attempts past the limit are not counted: the count stays at the limit.
const ATTEMPT = `
local attempts = redis.call('INCR', KEYS[1])
if attempts == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if attempts <= tonumber(ARGV[2]) then return 0 end
redis.call('DECR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
-- A count without an expiry (left by an older version) must not lock the client out for good.
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return ttl
`;

// A success gives its attempt back, unless the window has ended meanwhile: a DECR on a
// missing key would start a count of -1 that never expires.
const SUCCEEDED = `
if redis.call('DECR', KEYS[1]) < 0 then redis.call('DEL', KEYS[1]) end
`;

/**
 * The same limit shared by every instance through Redis: one counter per client and window.
 * When Redis cannot be reached, logins answer 503 rather than go unlimited.
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
      throw new LimiterUnavailableError({ cause: error });
    }
  };
  const windowMs = windowSeconds * 1000;
  return {
    attempt: (client) =>
      guarded(async () => {
        const waitMs = Number(await redis.eval(ATTEMPT, 1, prefix + client, windowMs, maxFailures));
        return waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : 0;
      }),
    succeeded: (client) =>
      guarded(async () => {
        await redis.eval(SUCCEEDED, 1, prefix + client);
      }),
    close: async () => {
      redis.disconnect();
    },
  };
}
