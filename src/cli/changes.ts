// book-catalogue changes: the change log after --since, one JSON line an entry, page by page
// to its end; with --follow, then each entry as it is committed, until Ctrl-C.
import { parseArgs } from "node:util";
import {
  type BookCatalogueClient,
  type Change,
  ChangesGoneError,
  createClient,
} from "../client/client.js";
import { connection, connectionOptions } from "./connection.js";
import { UsageError } from "./errors.js";
import { abortOnInterrupt } from "./interrupt.js";

const MAX_LIMIT = 1000;

export async function changesCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      ...connectionOptions,
      since: { type: "string" },
      follow: { type: "boolean" },
      limit: { type: "string" },
    },
  });
  if (values.since === undefined) {
    throw new UsageError("changes needs --since N (0: from the first entry)");
  }
  const since = wholeNumber(values.since, "--since", Number.MAX_SAFE_INTEGER, 0);
  const limit =
    values.limit === undefined ? undefined : wholeNumber(values.limit, "--limit", MAX_LIMIT, 1);
  const client = createClient(connection(values));
  // A write's error reaches print's callback; without a listener it would also end the process.
  process.stdout.on("error", () => {});
  const interrupt = abortOnInterrupt();
  try {
    const last = await printPages(client, since, limit, interrupt.signal);
    if (values.follow) await follow(client, last, interrupt.signal);
  } catch (error) {
    if (isClosedPipe(error)) return;
    if (!interrupt.signal.aborted) throw goneLine(error);
  } finally {
    interrupt.release();
  }
  // Stopped by Ctrl-C or SIGTERM: as the signal would end it.
  if (interrupt.signal.aborted)
    process.exitCode = interrupt.signal.reason === "SIGTERM" ? 143 : 130;
}

/** A whole number from `min` to `max`, else a usage error naming the option. */
function wholeNumber(text: string, option: string, max: number, min: number): number {
  const value = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${option} takes a whole number from ${min} to ${max}`);
  }
  return value;
}

/** Every page after `since`, to the log's end; resolves with the last sequence printed. */
async function printPages(
  client: BookCatalogueClient,
  since: number,
  limit: number | undefined,
  signal: AbortSignal,
): Promise<number> {
  let next = since;
  while (!signal.aborted) {
    const page = await client.changesPage({ since: next, ...(limit ? { limit } : {}) });
    if (page.changes.length === 0) break;
    await print(page.changes.map(line).join(""));
    next = page.next;
  }
  return next;
}

/** Each entry after `since` as it is committed, until the signal. */
async function follow(client: BookCatalogueClient, since: number, signal: AbortSignal) {
  for await (const change of client.changes({ since, signal })) await print(line(change));
}

const line = (change: Change) => `${JSON.stringify(change)}\n`;

/** Written to standard output; rejects with the stream's error (EPIPE when the reader left). */
function print(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

/** The reader closed the pipe (`changes | head`): it has what it wanted, not a failure. */
const isClosedPipe = (error: unknown) => (error as { code?: unknown }).code === "EPIPE";

/** A 410 as one line that says what to do; other errors as they are. */
function goneLine(error: unknown): unknown {
  if (!(error instanceof ChangesGoneError)) return error;
  return new Error(
    `the service answered 410: ${error.message} (the oldest kept is ${error.oldestKept}: ` +
      `read the catalogue again, with export, then go on with changes --since ${error.resumeSince})`,
  );
}
