import { perTurn } from "../per-turn.js";
import { StoreUnavailableError } from "../store.js";

/** Books written or read in one statement at most. */
const MAX_BATCH = 500;

/** Requests of one kind (creates, updates, deletes, reads by id) gathered for one statement. */
interface Kind {
  /** Creates, updates and deletes: one statement of them under way at a time. */
  write: boolean;
  /** When its longest-waiting request arrived (`arrivals`); undefined when none waits. */
  oldest(): number | undefined;
  /** Runs the next statement of this kind with what has gathered. */
  runNext(): Promise<void>;
}

/**
 * Batching for the kinds of one store, whose statements share `slots` connections: a kind's
 * requests that arrive in one turn of the event loop, or while every slot is taken by a
 * statement of any kind, go in one run when a slot is free (at most MAX_BATCH); a free slot
 * goes to the kind whose requests have waited longest. Requests parsed in one turn thus share
 * a statement and a commit, rather than the first ones taking every connection alone while
 * the rest wait, and a kind does not start a statement that would only wait behind the
 * others' for a connection. Writes of every kind take one slot at most: those that arrive
 * while one commits gather for the next (a group commit), rather than each committing a few
 * on a connection of its own, and the other slots stay free for reads, which then answer
 * while a write waits on a lock (docs/performance.md). A run that fails is tried again for
 * each of its items alone, so an item fails only for itself; an unavailable store fails them
 * all at once.
 */
export function batching(slots: number) {
  const kinds: Kind[] = [];
  let running = 0;
  let writing = false;
  /** Numbers the hand-overs of arrived requests, in the order they came. */
  let arrivals = 0;
  const nextWaiting = () => {
    let next: Kind | undefined;
    for (const kind of kinds) {
      const oldest = kind.oldest();
      if (oldest === undefined || (kind.write && writing)) continue;
      if (next === undefined || oldest < (next.oldest() as number)) next = kind;
    }
    return next;
  };
  const start = () => {
    while (running < slots) {
      const kind = nextWaiting();
      if (kind === undefined) return;
      running += 1;
      if (kind.write) writing = true;
      void kind.runNext().finally(() => {
        running -= 1;
        if (kind.write) writing = false;
        start();
      });
    }
  };

  /** `runMany` for the items of one kind, as above. */
  return function batched<In, Out>(
    runMany: (items: readonly In[]) => Promise<Out[]>,
    { write = false } = {},
  ) {
    type Waiting = {
      item: In;
      resolve: (out: Out) => void;
      reject: (error: unknown) => void;
      /** Its hand-over's number (`arrivals`). */
      arrival: number;
    };
    const waiting: Waiting[] = [];
    async function settle(batch: typeof waiting): Promise<void> {
      try {
        const outs = await runMany(batch.map((w) => w.item));
        for (const [i, w] of batch.entries()) w.resolve(outs[i] as Out);
      } catch (error) {
        if (batch.length === 1 || error instanceof StoreUnavailableError) {
          for (const w of batch) w.reject(error);
          return;
        }
        await Promise.all(
          batch.map((w) => runMany([w.item]).then(([out]) => w.resolve(out as Out), w.reject)),
        );
      }
    }
    kinds.push({
      write,
      oldest: () => waiting[0]?.arrival,
      runNext: () => settle(waiting.splice(0, MAX_BATCH)),
    });
    const arriving = perTurn((arrived: Waiting[]) => {
      arrivals += 1;
      for (const one of arrived) {
        one.arrival = arrivals;
        waiting.push(one);
      }
      start();
    });
    return (item: In) =>
      new Promise<Out>((resolve, reject) => arriving.push({ item, resolve, reject, arrival: 0 }));
  };
}

/** What `batching` gives: a batcher for each kind of a store's statements. */
export type Batched = ReturnType<typeof batching>;
