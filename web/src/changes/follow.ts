// Following the change log live: GET /changes as a stream, read with fetch() so that the token
// goes in the Authorization header. When the stream ends (its token expired, the service
// restarted, the network went), it is opened again from the last entry read, with the current
// token, after a pause that grows while openings keep failing.
import { type BookCatalogueClient, CatalogueError, type Change } from "book-catalogue";
import { eventParser } from "./sse.js";

export interface ChangeHandlers {
  /** Each entry after the one followed from, once, in order. */
  change(change: Change): void;
  /** 410: the entries after the last one read are no longer kept. Following stops. */
  gone(): void;
}

/** The pauses before opening again, while openings fail; then the last, again and again. */
const PAUSES_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000];

/** A stream that lasted this long was no failure: the next opening comes at once. */
const HEALTHY_MS = 10_000;

/** Follows the log from `since` until stopped (or gone); returns the stop. */
export function followChanges(
  client: BookCatalogueClient,
  since: number,
  handlers: ChangeHandlers,
): () => void {
  const stopped = new AbortController();
  let last = since;
  let failures = 0;
  const take = (change: Change) => {
    last = change.seq;
    handlers.change(change);
  };

  void (async () => {
    while (!stopped.signal.aborted) {
      const opened = Date.now();
      const status = await readStream(client, last, stopped.signal, take).catch(() => 0);
      if (stopped.signal.aborted) return;
      if (status === 410) return handlers.gone();
      const healthy = status === 200 && Date.now() - opened >= HEALTHY_MS;
      failures = healthy ? 0 : failures + 1;
      const pause = healthy ? 0 : (PAUSES_MS[Math.min(failures, PAUSES_MS.length) - 1] ?? 0);
      await sleep(pause, stopped.signal);
    }
  })();
  return () => stopped.abort();
}

/** One opening of the stream, read to its end: resolves with the answer's status. */
async function readStream(
  client: BookCatalogueClient,
  last: number,
  signal: AbortSignal,
  take: (change: Change) => void,
): Promise<number> {
  const token = await client.token().catch((error: unknown) => {
    if (error instanceof CatalogueError) return undefined;
    throw error;
  });
  if (token === undefined) return 401;
  const response = await fetch(`${location.origin}/changes?since=${last}`, {
    headers: { authorization: token, accept: "text/event-stream", "last-event-id": String(last) },
    signal,
  });
  if (!response.ok || response.body === null) {
    await response.body?.cancel();
    return response.status;
  }
  const parse = eventParser(({ data }) => take(JSON.parse(data) as Change));
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return response.status;
    parse(value);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
