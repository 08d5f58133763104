/**
 * Counts login attempts per client in fixed windows. An attempt is counted before the
 * credentials are checked, in the same step as the check against the limit, so parallel
 * guesses cannot all slip past a count that has not yet moved. A successful login gives its
 * attempt back: only failures use up the limit.
 */
export interface LoginLimiter {
  /**
   * Counts one attempt by the client. 0 when it may go ahead; else the seconds it must wait,
   * and the attempt must be refused without looking at the credentials.
   */
  attempt(client: string): Promise<number>;
  /** The attempt that `attempt` let through succeeded: it does not count as a failure. */
  succeeded(client: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The failed-login counts cannot be reached (Redis, or the primary process with WORKERS):
 * logins answer 503 rather than go unlimited, and the log and metrics name the limiter.
 */
export class LimiterUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the failed-login counts are unavailable", options);
    this.name = "LimiterUnavailableError";
  }
}

interface Window {
  attempts: number;
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
    async attempt(client) {
      let window = current(client);
      if (window === undefined) {
        if (windows.size >= SWEEP_THRESHOLD) {
          const time = now();
          for (const [key, value] of windows) if (value.endsAt <= time) windows.delete(key);
        }
        window = { attempts: 0, endsAt: now() + windowMs };
        windows.set(client, window);
      }
      if (window.attempts >= maxFailures) {
        return Math.max(1, Math.ceil((window.endsAt - now()) / 1000));
      }
      window.attempts += 1;
      return 0;
    },
    async succeeded(client) {
      const window = current(client);
      if (window !== undefined && window.attempts > 0) window.attempts -= 1;
    },
    async close() {
      windows.clear();
    },
  };
}
