// A Server-Sent Events client for tests: fetch with the token in a header (which EventSource
// cannot send), the events parsed as they arrive.

import type { Book } from "../../src/rules/book.js";

export interface Event {
  id: string;
  event: string;
  data: { seq: number; op: string; id: number; book: Book | null; before: Book | null };
}

/** An open stream: the events read so far, and a wait for more. */
export function openStream(url: string, token: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const events: Event[] = [];
  let text = "";
  let ended = false;
  const opened = fetch(url, {
    headers: { authorization: token, accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  const reading = opened.then(async (response) => {
    if (response.status !== 200) return response;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        let end = text.indexOf("\n\n");
        while (end !== -1) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const fields = Object.fromEntries(
            block
              .split("\n")
              .filter((line) => !line.startsWith(":"))
              .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
          );
          if (fields.data !== undefined)
            events.push({ ...fields, data: JSON.parse(fields.data) } as Event);
          end = text.indexOf("\n\n");
        }
      }
    } catch {
      // aborted
    }
    ended = true;
    return response;
  });
  const until = async (check: () => boolean, ms = 5_000) => {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`waited ${ms} ms; have ${events.length} events`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return {
    events,
    opened,
    reading,
    ended: () => ended,
    until,
    close: () => controller.abort(),
  };
}
