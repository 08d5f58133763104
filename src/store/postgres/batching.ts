import { perTurn } from "../per-turn.js";
import { StoreUnavailableError } from "../store.js";

/** Books written or read in one statement at most. */
const MAX_BATCH = 500;

/** Requests of one kind (creates, updates, deletes, reads by id) gathered for one statement. */
interface Kind {
  waiting(): boolean;
  /** Runs the next statement of this kind with what has gathered. */
  runNext(): Promise<void>;
}

/**
 * Batching for the kinds of one store, whose statements share `slots` connections: a kind's
 * requests that arrive in one turn of the event loop, or while every slot is taken by a
 * statement of any kind, go in one run when a slot is free (at most MAX_BATCH); slots go to
 * the kinds in turn. Requests parsed in one turn thus share a statement and a commit, rather
 * than the first ones taking every connection alone while the rest wait, and a kind does not
 * start a statement that would only wait behind the others' for a connection
 * (docs/performance.md). A run that fails is tried again for each of its items alone, so an
 * item fails only for itself; an unavailable store fails them all at once.
 */
export function batching(slots: number) {
  const kinds: Kind[] = [];
  let running = 0;
  let next = 0;
  const nextWaiting = () => {
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[(next + i) % kinds.length] as Kind;
      if (kind.waiting()) {
        next = (next + i + 1) % kinds.length;
        return kind;
      }
    }
    return undefined;
  };
  const start = () => {
    while (running < slots) {
      const kind = nextWaiting();
      if (kind === undefined) return;
      running += 1;
      void kind.runNext().finally(() => {
        running -= 1;
        start();
      });
    }
  };

  /** `runMany` for the items of one kind, as above. */
  return function batched<In, Out>(runMany: (items: readonly In[]) => Promise<Out[]>) {
    const waiting: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] =
      [];
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
      waiting: () => waiting.length > 0,
      runNext: () => settle(waiting.splice(0, MAX_BATCH)),
    });
    const arriving = perTurn((arrived: typeof waiting) => {
      for (const one of arrived) waiting.push(one);
      start();
    });
    return (item: In) =>
      new Promise<Out>((resolve, reject) => arriving.push({ item, resolve, reject }));
  };
}

/** What `batching` gives: a batcher for each kind of a store's statements. */
export type Batched = ReturnType<typeof batching>;
