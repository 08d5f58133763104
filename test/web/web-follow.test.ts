// The page's follower of the change log (web/src/changes/follow.ts), against a stand-in for
// fetch: each entry once, in order; opened again from the last one read when a stream ends;
// a 410 handed on, and the following stopped.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import type { Change } from "../../src/client/client.js";
import { followChanges } from "../../web/src/changes/follow.js";
import { describe } from "../support/describe.js";

const entry = (seq: number): Change => ({
  seq,
  op: "update",
  id: 1,
  book: { id: 1, title: "Dune", author: "Frank Herbert", year: 1965 + seq },
  before: null,
  at: "2026-01-01T00:00:00.000Z",
  by: { name: "ana", account: 2 },
});
const event = (seq: number) => `id: ${seq}\nevent: update\ndata: ${JSON.stringify(entry(seq))}\n\n`;

/** A stream of `text` cut in two mid-event, then ended. */
function answer(status: number, text = ""): Response {
  const half = Math.floor(text.length / 2);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const encoder = new TextEncoder();
      controller.enqueue(encoder.encode(text.slice(0, half)));
      controller.enqueue(encoder.encode(text.slice(half)));
      controller.close();
    },
  });
  return new Response(body, { status, headers: { "content-type": "text/event-stream" } });
}

const source = { origin: "http://catalogue", token: async () => "a-token" };
const realFetch = globalThis.fetch;

describe("the page's follower of the change log", () => {
  const asked: { url: string; headers: Record<string, string> }[] = [];
  function answering(answers: Response[]) {
    globalThis.fetch = async (url, init) => {
      asked.push({ url: String(url), headers: init?.headers as Record<string, string> });
      return answers.shift() ?? new Promise<Response>(() => {});
    };
  }
  afterEach(() => {
    globalThis.fetch = realFetch;
    asked.length = 0;
  });

  test("takes each entry once, and opens again from the last one read", async () => {
    answering([answer(200, `retry: 2000\n\n${event(5)}${event(6)}`), answer(200, event(7))]);
    const taken: number[] = [];
    let stop = () => {};
    await new Promise<void>((done) => {
      stop = followChanges<Change>(source, 4, {
        change: (change) => {
          taken.push(change.seq);
          if (change.seq === 7) done();
        },
        gone: () => assert.fail("not gone"),
      });
    });
    stop();
    assert.deepEqual(taken, [5, 6, 7]);
    assert.deepEqual(
      asked.map(({ url, headers }) => [url, headers["last-event-id"], headers.authorization]),
      [
        ["http://catalogue/changes?since=4", "4", "a-token"],
        ["http://catalogue/changes?since=6", "6", "a-token"],
      ],
    );
    assert.equal(asked[0]?.headers.accept, "text/event-stream");
  });

  test("a 410 is handed on, and nothing is asked after it", async () => {
    answering([answer(410, '{"status":410}')]);
    await new Promise<void>((done) => {
      followChanges(source, 1, { change: () => assert.fail("no entry"), gone: done });
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(asked.length, 1);
  });

  test("a refusal is asked again after a pause, until stopped", async () => {
    answering([answer(503, "{}"), answer(200, event(3))]);
    const started = Date.now();
    let stop = () => {};
    await new Promise<void>((done) => {
      stop = followChanges(source, 2, { change: () => done(), gone: () => {} });
    });
    stop();
    assert.ok(Date.now() - started >= 450, "after a pause");
    assert.equal(asked.length, 2);
  });
});
