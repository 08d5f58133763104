import { perTurn } from "../per-turn.js";
import { StoreUnavailableError } from "../store.js";

/** Books written or read in one statement at most. */
const MAX_BATCH = 500;

/**
 * `runMany` for the items that arrive in one turn of the event loop, or while `slots` runs are
 * under way: all in one run at the end of the turn or when a slot is free (at most MAX_BATCH).
 * Requests parsed in one turn thus share a statement and a commit, rather than the first ones
 * taking every slot alone while the rest wait (docs/performance.md: mixed load a fifth faster).
 * A run that fails is tried again for each of its items alone, so an item fails only for
 * itself; an unavailable store fails them all at once.
 */
export function batched<In, Out>(slots: number, runMany: (items: readonly In[]) => Promise<Out[]>) {
  const waiting: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  let running = 0;
  const start = () => {
    while (running < slots && waiting.length > 0) {
      const batch = waiting.splice(0, MAX_BATCH);
      running += 1;
      void settle(batch).finally(() => {
        running -= 1;
        start();
      });
    }
  };
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
  const arriving = perTurn((arrived: typeof waiting) => {
    for (const one of arrived) waiting.push(one);
    start();
  });
  return (item: In) =>
    new Promise<Out>((resolve, reject) => arriving.push({ item, resolve, reject }));
}
