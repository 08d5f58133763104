// The live feed of one process: one reader of the change log for all its followers. It reads
// the entries after the newest it has read when a write of this process is answered, and every
// `pollMs` whatever happens (the writes of other processes and instances), and hands each
// batch to every follower that is live. A follower first catches up on its own reads, then
// joins; each entry reaches it once, in sequence order (the stores number entries in the
// order they commit).
import { type Change, type ChangeLog, ChangesGoneError } from "../store/changes.js";
import { StoreUnavailableError } from "../store/store.js";

/** Entries read at once, by the feed and by a follower catching up. */
export const FEED_PAGE = 500;

export interface Follower {
  /**
   * While it catches up: resolves once the follower's reader has read enough of what it was
   * given to take another page (true), or once it is gone (false: nothing more is read for it).
   * So a follower far behind is paced by its reader, never dropped for its backlog.
   */
  ready(): Promise<boolean>;
  /** Takes a page of its backlog, once ready. */
  catchUp(changes: Change[]): void;
  /**
   * Takes entries as they come, in order, once caught up; false when the follower cannot take
   * more (it is then dropped).
   */
  take(changes: Change[]): boolean;
  /** The follower is dropped: it fell behind, or the feed closed. */
  dropped(): void;
}

/** A follower caught up: the feed's batches reach it. */
type Live = Pick<Follower, "take" | "dropped">;

export interface ChangeFeed {
  /**
   * Catches `follower` up from `since`, then keeps it live until `stop` is called or it is
   * dropped. Rejects as the log does (ChangesGoneError) before anything is taken.
   */
  follow(since: number, follower: Follower): Promise<{ stop(): void }>;
  /** A write of this process was answered: read soon. */
  wake(): void;
  /** How many followers are live. */
  readonly size: number;
  close(): void;
}

export function changeFeed(log: ChangeLog, pollMs: number): ChangeFeed {
  const live = new Set<Live>();
  /** The newest sequence the feed has read and handed on; undefined until it starts. */
  let position: number | undefined;
  let reading: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  const handOn = (batch: Change[]) => {
    for (const follower of live) {
      if (!follower.take(batch)) drop(follower);
    }
  };
  const drop = (follower: Live) => {
    if (live.delete(follower)) follower.dropped();
    if (live.size === 0) stopPolling();
  };
  const readNewer = async () => {
    position ??= await log.latest();
    for (;;) {
      const batch: Change[] = await log.list(position, FEED_PAGE).catch(async (error) => {
        // Trimmed or restored past the feed: followers must read the catalogue again.
        if (!(error instanceof ChangesGoneError)) throw error;
        for (const follower of [...live]) drop(follower);
        position = await log.latest();
        return [];
      });
      if (batch.length > 0) position = (batch.at(-1) as Change).seq;
      handOn(batch);
      if (batch.length < FEED_PAGE) return;
    }
  };
  const read = (): Promise<void> => {
    if (reading !== undefined) {
      again = true;
      return reading;
    }
    reading = readNewer()
      .catch(() => {}) // the store is down: the next poll tries again
      .finally(() => {
        reading = undefined;
        if (again) {
          again = false;
          void read();
        }
      });
    return reading;
  };
  const stopPolling = () => {
    clearInterval(timer);
    timer = undefined;
  };

  return {
    async follow(since, follower) {
      await read();
      let cursor = since;
      // Caught up once its reads reach what the feed has handed on: from then on the feed's
      // batches hold everything after it.
      for (;;) {
        // Ready first, the last page too: it joins the feed with room for what comes next,
        // in the same turn as it finds itself caught up, so nothing comes between.
        if (!(await follower.ready())) return { stop: () => {} };
        if (position === undefined) throw new StoreUnavailableError();
        if (cursor >= position) break;
        const page = await log.list(cursor, FEED_PAGE);
        // The feed read entries after `cursor`: only a trim could have taken them, and the
        // log would have said so.
        if (page.length === 0) throw new StoreUnavailableError();
        follower.catchUp(page);
        cursor = (page.at(-1) as Change).seq;
      }
      let seen = cursor;
      const filtered: Live = {
        take: (batch) => {
          const newer = batch.filter((change) => change.seq > seen);
          if (newer.length === 0) return true;
          seen = (newer.at(-1) as Change).seq;
          return follower.take(newer);
        },
        dropped: () => follower.dropped(),
      };
      live.add(filtered);
      timer ??= setInterval(read, pollMs).unref();
      return {
        stop: () => {
          live.delete(filtered);
          if (live.size === 0) stopPolling();
        },
      };
    },
    wake: () => {
      if (live.size > 0) void read();
    },
    get size() {
      return live.size;
    },
    close() {
      stopPolling();
      for (const follower of [...live]) drop(follower);
    },
  };
}
