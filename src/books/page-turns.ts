// Listings take turns on the event loop, a page at a time, so that no listing of any size,
// nor many at once, holds it: other requests, /health and the sockets' writes go on between.

/**
 * The time listings may read pages in one turn of the event loop, all of them together. A
 * page costs well under a millisecond, a broad search's a few: see docs/performance.md.
 */
export const LISTING_SLICE_MS = 5;

export interface PageTurns {
  /**
   * Undefined when the listing may read its next page now, in the same synchronous step (so
   * the next listing asking sees the time it took); else a promise to await, in a later turn
   * of the loop, after which the listing asks again.
   */
  wait(): Promise<void> | undefined;
}

/**
 * A slice of the loop's time begins with the first page read after the loop turned, and ends
 * when it turns again; the listings that ask once it is used up wait for the next. They are
 * woken together, in the order they came, and ask again in that order: the first take the new
 * slice, the rest wait again ahead of the listings that read a page in it. Each listing thus
 * gets its pages in turn, and none is left behind by a faster one.
 */
export function createPageTurns(sliceMs = LISTING_SLICE_MS): PageTurns {
  let waiting: (() => void)[] = [];
  let sliceStarted: number | undefined;
  const endSlice = () => {
    sliceStarted = undefined;
    const woken = waiting;
    waiting = [];
    for (const wake of woken) wake();
  };
  return {
    wait() {
      const now = performance.now();
      if (sliceStarted === undefined) {
        sliceStarted = now;
        setImmediate(endSlice);
      }
      if (now - sliceStarted < sliceMs) return undefined;
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}
