// The topology's load: clients that each send one request at a time through haproxy, a mix of
// reads, creates, updates and searches, every answer kept with its times, and every book
// acknowledged kept, so that a fault's cost and any write it lost can be counted afterwards.
import { connect } from "node:net";

export type Kind = "get" | "create" | "update" | "search";

/** One request: when it began and ended (ms since the run began) and what came back. */
export interface Outcome {
  step: string;
  kind: Kind;
  start: number;
  end: number;
  /** The HTTP status, or "timeout" (no answer in 5 s) or "network" (the connection failed). */
  status: number | "timeout" | "network";
  id?: number;
  /** Why a request had no answer, for a "network" status: the error's cause. */
  cause?: string;
  /** What a create or an update sent: the title and author, the year. */
  book?: { title: string; author: string; year: number };
}

const T0 = performance.now();
export const now = () => performance.now() - T0;

const REQUEST_TIMEOUT_MS = 5_000;
const WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron"];
const pick = <T>(items: readonly T[]) => items[Math.floor(Math.random() * items.length)] as T;

export interface Load {
  /** Ids of books known to exist: seeded, then every 201. */
  known: number[];
  outcomes: Outcome[];
  step: string;
}

let created = 0;

/** One request of the mix: 60 % reads by id, 15 % creates, 15 % updates, 10 % searches. */
async function oneRequest(url: string, token: string, load: Load): Promise<Outcome> {
  const r = Math.random();
  const kind: Kind = r < 0.6 ? "get" : r < 0.75 ? "create" : r < 0.9 ? "update" : "search";
  const outcome: Outcome = { step: load.step, kind, start: now(), end: 0, status: "network" };
  let method = "GET";
  let path: string;
  let body: object | undefined;
  if (kind === "get" || kind === "update") {
    outcome.id = pick(load.known);
    path = `/book/${outcome.id}`;
  } else if (kind === "create") {
    path = "/book";
  } else {
    path = `/books?q=${pick(WORDS)}&limit=20`;
  }
  if (kind === "create") {
    method = "POST";
    created += 1;
    outcome.book = {
      title: `${pick(WORDS)} ${created}`,
      author: `Author ${created % 97}`,
      year: 1990,
    };
    body = outcome.book;
  } else if (kind === "update") {
    method = "PUT";
    outcome.book = { title: "", author: "", year: 1800 + Math.floor(Math.random() * 225) };
    body = { year: outcome.book.year };
  }
  await send(`${url}${path}`, method, token, body, outcome);
  if (kind === "create" && outcome.status === 201 && outcome.id !== undefined) {
    load.known.push(outcome.id);
  }
  return outcome;
}

async function send(
  url: string,
  method: string,
  token: string,
  body: object | undefined,
  into: Outcome,
) {
  try {
    const answer = await fetch(url, {
      method,
      headers: { authorization: token, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await answer.text();
    into.status = answer.status;
    if (answer.status === 201) into.id = (JSON.parse(text) as { data: { id: number } }).data.id;
  } catch (error) {
    const { name, cause } = error as Error & { cause?: { code?: string; message?: string } };
    into.status = name === "TimeoutError" || name === "AbortError" ? "timeout" : "network";
    into.cause = cause?.code ?? cause?.message ?? (error as Error).message;
  }
  into.end = now();
}

/**
 * `clients` loops of one request at a time until `stop` resolves; each waits 20 ms after an
 * answer that is not 2xx, as a client would before trying again, rather than spin.
 */
export async function runLoad(
  url: string,
  token: string,
  load: Load,
  clients: number,
  stop: Promise<unknown>,
): Promise<void> {
  let running = true;
  const stopped = stop.then(() => {
    running = false;
  });
  const client = async () => {
    while (running) {
      const outcome = await oneRequest(url, token, load);
      load.outcomes.push(outcome);
      const ok = typeof outcome.status === "number" && outcome.status < 300;
      if (!ok) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await Promise.all([stopped, ...Array.from({ length: clients }, client)]);
}

export const isError = (outcome: Outcome) =>
  typeof outcome.status !== "number" || outcome.status >= 300;
export const isWrite = (outcome: Outcome) => outcome.kind === "create" || outcome.kind === "update";

/** One command through haproxy's runtime API (its stats socket); the whole answer. */
export function haproxyCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const connection = connect(socket, () => connection.end(`${command}\n`));
    connection.setEncoding("utf8");
    connection.on("data", (chunk) => {
      answer += chunk;
    });
    connection.once("end", () => resolve(answer));
    connection.once("error", reject);
    connection.setTimeout(2_000, () => connection.destroy(new Error(`${command}: no answer`)));
  });
}

/** Each server of the backend with its state (UP, DOWN…) and its 4xx answers so far. */
export async function serverStats(socket: string) {
  const [header = "", ...rows] = (await haproxyCommand(socket, "show stat")).trim().split("\n");
  const columns = header.replace(/^# /, "").split(",");
  const column = (row: string[], name: string) => row[columns.indexOf(name)] ?? "";
  return rows
    .map((line) => line.split(","))
    .filter(
      (row) => column(row, "pxname") === "catalogue" && column(row, "svname").startsWith("app"),
    )
    .map((row) => ({
      server: column(row, "svname"),
      status: column(row, "status"),
      hrsp4xx: Number(column(row, "hrsp_4xx")),
    }));
}

export interface Transition {
  at: number;
  server: string;
  status: string;
}

/** Polls the servers' states every 100 ms until stopped: each change, with its time. */
export function watchServers(socket: string) {
  const transitions: Transition[] = [];
  const last = new Map<string, string>();
  let running = true;
  const done = (async () => {
    while (running) {
      for (const { server, status } of await serverStats(socket).catch(() => [])) {
        if (last.get(server) !== status) transitions.push({ at: now(), server, status });
        last.set(server, status);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    transitions,
    async stop() {
      running = false;
      await done;
    },
  };
}
