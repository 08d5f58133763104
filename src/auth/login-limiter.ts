import { Redis } from "ioredis";
import { StoreUnavailableError } from "../store/store.js";

/** Counts failed logins per client in fixed windows; a client over the limit waits out its window. */
export interface LoginLimiter {
  /** Seconds the client must wait before trying again; 0 when it may try now. */
  retryAfter(client: string): Promise<number>;
  recordFailure(client: string): Promise<void>;
  close(): Promise<void>;
}

interface Window {
  failures: number;
  endsAt: number;
}

// Past this many tracked clients, expired windows are swept so the map cannot grow without bound.
const SWEEP_THRESHOLD = 10_000;

export function createMemoryLoginLimiter(
  maxFailures: number,
  windowSeconds: number,
  now: () => number = Date.now,
): LoginLimiter {
  const windows = new Map<string, Window>();
  const windowMs = windowSeconds * 1000;

  const current = (client: string): Window | undefined => {
    const window = windows.get(client);
    if (window !== undefined && window.endsAt <= now()) {
      windows.delete(client);
      return undefined;
    }
    return window;
  };

  return {
    async retryAfter(client) {
      const window = current(client);
      if (window === undefined || window.failures < maxFailures) return 0;
      return Math.max(1, Math.ceil((window.endsAt - now()) / 1000));
    },
    async recordFailure(client) {
      const window = current(client);
      if (window !== undefined) {
        window.failures += 1;
        return;
      }
      if (windows.size >= SWEEP_THRESHOLD) {
        const time = now();
        for (const [key, value] of windows) if (value.endsAt <= time) windows.delete(key);
      }
      windows.set(client, { failures: 1, endsAt: now() + windowMs });
    },
    async close() {
      windows.clear();
    },
  };
}

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
