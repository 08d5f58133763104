import type { DatabaseSync } from "node:sqlite";
import { StoreUnavailableError } from "../store.js";
import { translate } from "./errors.js";
import { transaction } from "./schema.js";

interface PendingWrite {
  apply: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommit {
  /** Applies the write in the next group's transaction; resolves after that commit. */
  write<T>(apply: () => T): Promise<T>;
  /** Commits the writes waiting now (at close). */
  flush(): void;
}

/**
 * Writes that arrive while the event loop is busy are applied in one transaction, so they
 * share one fsync, and each resolves only after that commit. `beforeCommit` runs before each
 * group (to end a shared read and forget cached reads).
 */
export function createGroupCommit(db: DatabaseSync, beforeCommit: () => void): GroupCommit {
  let pending: PendingWrite[] = [];
  const commitAll = (batch: PendingWrite[]) => transaction(db, () => batch.map((w) => w.apply()));

  function flush(): void {
    const batch = pending;
    pending = [];
    beforeCommit();
    try {
      const results = commitAll(batch);
      for (const [i, write] of batch.entries()) write.resolve(results[i]);
    } catch (error) {
      const translated = translate(error);
      if (batch.length === 1 || translated instanceof StoreUnavailableError) {
        for (const write of batch) write.reject(translated);
        return;
      }
      // One write's failure must not fail the others: replay them one by one.
      for (const write of batch) {
        try {
          write.resolve(commitAll([write])[0]);
        } catch (single) {
          write.reject(translate(single));
        }
      }
    }
  }

  return {
    write: <T>(apply: () => T) =>
      new Promise<T>((resolve, reject) => {
        if (pending.length === 0) setImmediate(flush);
        pending.push({ apply, resolve: resolve as (value: unknown) => void, reject });
      }),
    flush() {
      if (pending.length > 0) flush();
    },
  };
}
