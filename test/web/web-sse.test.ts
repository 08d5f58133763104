// The page's reader of Server-Sent Events (web/src/changes/sse.ts): the change log's stream as
// it comes, in pieces cut anywhere.
import assert from "node:assert/strict";
import { test } from "node:test";
import { eventParser, type ServerEvent } from "../../web/src/changes/sse.js";
import { describe } from "../support/describe.js";

/** The events of `text` fed to a parser in the pieces given by `cuts`. */
function parse(text: string, cuts: number[] = []): ServerEvent[] {
  const events: ServerEvent[] = [];
  const feed = eventParser((event) => events.push(event));
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    feed(text.slice(from, cut));
    from = cut;
  }
  return events;
}

const STREAM =
  'retry: 2000\n\nid: 7\nevent: update\ndata: {"seq":7}\n\n: heartbeat\n\nid: 8\nevent: delete\ndata: {"seq":8}\n\n';

describe("the page's Server-Sent Events", () => {
  test("each event whole, with its id and name; the retry and comments skipped", () => {
    assert.deepEqual(parse(STREAM), [
      { id: "7", event: "update", data: '{"seq":7}' },
      { id: "8", event: "delete", data: '{"seq":8}' },
    ]);
  });

  test("the same, whatever the pieces it comes in", () => {
    const whole = parse(STREAM);
    for (let cut = 1; cut < STREAM.length; cut++) {
      assert.deepEqual(parse(STREAM, [cut]), whole, `cut at ${cut}`);
    }
    assert.deepEqual(
      parse(
        STREAM,
        [...STREAM].map((_, at) => at),
      ),
      whole,
      "a character a piece",
    );
  });

  test("CRLF and CR end lines too, a CRLF cut in two included; data lines join", () => {
    const text = "id: 1\r\ndata: a\r\ndata: b\r\n\r\nid: 2\rdata:c\r\r: more\n";
    const expected = [
      { id: "1", event: "message", data: "a\nb" },
      { id: "2", event: "message", data: "c" },
    ];
    assert.deepEqual(parse(text), expected);
    assert.deepEqual(parse(text, [text.indexOf("\r") + 1]), expected);
  });

  test("an event not yet ended waits; one without data is none", () => {
    assert.deepEqual(parse("id: 3\nevent: create\n\nid: 4\ndata: x\n"), []);
  });
});
