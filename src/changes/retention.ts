// Keeping the change log to CHANGES_KEEP_DAYS and CHANGES_KEEP: trimmed on a timer, off every
// request's path, a slice at a time so that no trim holds the store's writer long.
import type { ChangeLog, ChangesKept } from "../store/changes.js";

/** How often the log is trimmed. */
export const TRIM_INTERVAL_MS = 60_000;

interface Log {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/**
 * Trims now and every TRIM_INTERVAL_MS; a trim that removed a whole slice goes on at once
 * with the next. A failure (the store down) is logged and tried again at the next tick.
 */
export function keepChanges(changes: ChangeLog, kept: ChangesKept, log: Log): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const trim = async () => {
    let removed = 0;
    try {
      for (
        let slice = await changes.trim(kept);
        slice > 0 && !stopped;
        slice = await changes.trim(kept)
      ) {
        removed += slice;
      }
      if (removed > 0) log.info({ removed }, "change log trimmed");
    } catch (error) {
      log.warn({ err: error }, "change log not trimmed; trying again later");
    }
    if (!stopped) timer = setTimeout(trim, TRIM_INTERVAL_MS).unref();
  };
  void trim();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
