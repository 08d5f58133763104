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
