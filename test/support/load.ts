// Mixed load from inside a test, for faults: every answer's status counted, every book whose
// creation was acknowledged kept, so that the test can look for each one afterwards.
import assert from "node:assert/strict";
import type { Book } from "../../src/rules/book.js";
import { pgConnect } from "./pg.js";
import type { Service } from "./service.js";

/** A request waiting longer than this is a hang: the test fails. */
const HANG_MS = 10_000;

export interface Load {
  /** Answers by status; "no answer" for a connection that failed or took too long. */
  readonly statuses: Map<number | "no answer", number>;
  readonly acknowledged: readonly Book[];
  /** Creates acknowledged since `since` (a Date.now()). */
  createdSince(since: number): number;
  stop(): Promise<void>;
}

/**
 * `clients` loops, each request in turn a create, a read and an update of a book created
 * before, or a listing; `creates: "only"` sends creates alone.
 */
export function mixedLoad(
  service: Service,
  token: string,
  clients: number,
  creates: "mixed" | "only" = "mixed",
): Load {
  const statuses = new Map<number | "no answer", number>();
  const acknowledged: Book[] = [];
  const times: number[] = [];
  let running = true;
  let n = 0;
  const next = (): [string, string, object | undefined] => {
    const known = acknowledged[Math.floor(Math.random() * acknowledged.length)];
    const kind = creates === "only" || known === undefined ? 0 : n % 4;
    n += 1;
    if (kind === 0) return ["POST", "/book", { title: `Load ${n}`, author: "Writer", year: 2000 }];
    if (kind === 1) return ["GET", `/book/${known?.id}`, undefined];
    if (kind === 2) return ["PUT", `/book/${known?.id}`, { year: 2001 }];
    return ["GET", "/books?limit=20", undefined];
  };
  const client = async () => {
    while (running) {
      const [method, path, body] = next();
      const status = await send(service, token, method, path, body);
      statuses.set(status.code, (statuses.get(status.code) ?? 0) + 1);
      if (status.code === 201) {
        acknowledged.push(status.book as Book);
        times.push(Date.now());
      } else if (status.code !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const done = Promise.all(Array.from({ length: clients }, client));
  return {
    statuses,
    acknowledged,
    createdSince: (since) => times.filter((time) => time >= since).length,
    async stop() {
      running = false;
      await done;
    },
  };
}

async function send(service: Service, token: string, method: string, path: string, body?: object) {
  try {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: token },
      signal: AbortSignal.timeout(HANG_MS),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await response.json()) as { data?: Book };
    return { code: response.status, book: answer.data };
  } catch {
    return { code: "no answer" as const, book: undefined };
  }
}

/** Waits until `count` more creates are acknowledged; fails after `withinMs`. */
export async function writesSucceed(load: Load, withinMs: number, count = 5): Promise<number> {
  const since = Date.now();
  while (load.createdSince(since) < count) {
    assert.ok(Date.now() - since < withinMs, `no ${count} writes within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - since;
}

/** The statuses seen that are not among `allowed`, for an assertion's message. */
export const unexpectedStatuses = (load: Load, allowed: readonly number[]) =>
  [...load.statuses.entries()].filter(([status]) => !allowed.includes(status as number));

/** How many acknowledged books the database at `url` does not hold as answered (or updated). */
export async function lostOn(url: string, acknowledged: readonly Book[]): Promise<number> {
  const db = await pgConnect(url);
  try {
    const stored = await db.sql<Book>`SELECT id, title, author, year FROM books
      WHERE id = ANY(${acknowledged.map((book) => book.id)}::bigint[])`;
    const byId = new Map(stored.map((book) => [book.id, book]));
    return acknowledged.filter((book) => byId.get(book.id)?.title !== book.title).length;
  } finally {
    await db.end();
  }
}
