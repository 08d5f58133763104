// Following the change log live: GET /changes as a stream, read with fetch() so that the token
// goes in the Authorization header. When the stream ends (its token expired, the service
// restarted, the network went), it is opened again from the last entry read, with the current
// token, after a pause that grows while openings keep failing. It knows no more of an entry
// than its `seq`, and of the service than where it is and how to get a token.
import { eventParser } from "./sse.js";

/** An entry of the log, as far as following it goes. */
interface Entry {
  seq: number;
}

/** Where the log is, and the token to read it with (undefined when there is none). */
export interface ChangeSource {
  origin: string;
  token(): Promise<string | undefined>;
}

export interface ChangeHandlers<E extends Entry> {
  /** Each entry after the one followed from, once, in order. */
  change(change: E): void;
  /** 410: the entries after the last one read are no longer kept. Following stops. */
  gone(): void;
}

/** The pauses before opening again, while openings fail; then the last, again and again. */
const PAUSES_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000];

/** A stream that lasted this long was no failure: the next opening comes at once. */
const HEALTHY_MS = 10_000;

/** Follows the log from `since` until stopped (or gone); returns the stop. */
export function followChanges<E extends Entry>(
  source: ChangeSource,
  since: number,
  handlers: ChangeHandlers<E>,
): () => void {
  const stopped = new AbortController();
  let last = since;
  let failures = 0;
  const take = (change: E) => {
    last = change.seq;
    handlers.change(change);
  };

  void (async () => {
    while (!stopped.signal.aborted) {
      const opened = Date.now();
      const status = await readStream(source, last, stopped.signal, take).catch(() => 0);
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
async function readStream<E extends Entry>(
  source: ChangeSource,
  last: number,
  signal: AbortSignal,
  take: (change: E) => void,
): Promise<number> {
  const token = await source.token();
  if (token === undefined) return 401;
  const response = await fetch(`${source.origin}/changes?since=${last}`, {
    headers: { authorization: token, accept: "text/event-stream", "last-event-id": String(last) },
    signal,
  });
  if (!response.ok || response.body === null) {
    await response.body?.cancel();
    return response.status;
  }
  const parse = eventParser(({ data }) => take(JSON.parse(data) as E));
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
