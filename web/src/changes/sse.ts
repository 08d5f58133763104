// Server-Sent Events, read from a fetch() body: EventSource cannot send the token in a header.
// Only what the change log's stream uses: `id`, `event` and `data` lines, comments skipped.

export interface ServerEvent {
  /** The last event id seen, this event's if it had one. */
  id: string | undefined;
  event: string;
  data: string;
}

/** A parser to feed the stream's text as it comes: each whole event goes to `onEvent`. */
export function eventParser(onEvent: (event: ServerEvent) => void): (text: string) => void {
  let pending = "";
  let data: string[] = [];
  let event = "";
  let id: string | undefined;

  const line = (text: string) => {
    if (text === "") {
      if (data.length > 0) onEvent({ id, event: event || "message", data: data.join("\n") });
      data = [];
      event = "";
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id" && !value.includes("\0")) id = value;
  };

  return (text) => {
    pending += text;
    // A CR at the end may be the first half of a CRLF: it waits for the next piece.
    const cut = pending.endsWith("\r") ? pending.length - 1 : pending.length;
    const lines = pending.slice(0, cut).split(/\r\n|\r|\n/);
    pending = (lines.pop() ?? "") + pending.slice(cut);
    for (const each of lines) line(each);
  };
}
