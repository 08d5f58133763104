// Commits of book changes told by PostgreSQL (LISTEN/NOTIFY, migration 13's trigger), so an
// instance's change streams show another's writes at once rather than at their next poll. On a
// connection of its own, which must be direct or session-pooled: a transaction pooler hands
// each transaction another server connection, and the LISTEN would be lost.
import pg from "pg";
import { CHANGES_CHANNEL } from "../migrations.js";

/** How long a connection may take, and the wait before trying again after one is lost. */
const CONNECT_TIMEOUT_MS = 10_000;
const RETRY_MS = 1_000;

export interface Listening {
  close(): Promise<void>;
}

/**
 * Calls `onChange` on each commit that changed books, and once on each (re)connection, since
 * what was told while away is lost. A lost connection is made again every RETRY_MS;
 * `onTrouble` says why, once an episode.
 */
export function listenForChanges(
  url: string,
  onChange: () => void,
  onTrouble: (message: string) => void,
): Listening {
  let client: pg.Client | undefined;
  let closed = false;
  let troubled = false;
  let retry: NodeJS.Timeout | undefined;
  const lost = (error: Error) => {
    if (!troubled) onTrouble(`cannot LISTEN for changes: ${error.message}; trying again`);
    troubled = true;
    client?.removeAllListeners();
    client?.on("error", () => {});
    void client?.end().catch(() => {});
    client = undefined;
    if (!closed) retry = setTimeout(connect, RETRY_MS).unref();
  };
  const connect = () => {
    const listener = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      application_name: "book-catalogue-listen",
    });
    client = listener;
    listener.on("error", lost);
    listener.on("end", () => lost(new Error("the connection ended")));
    listener.on("notification", onChange);
    listener
      .connect()
      .then(() => listener.query(`LISTEN ${CHANGES_CHANNEL}`))
      .then(() => {
        if (troubled) onTrouble("listening for changes again");
        troubled = false;
        onChange();
      }, lost);
  };
  connect();
  return {
    close: async () => {
      closed = true;
      clearTimeout(retry);
      const last = client;
      client = undefined;
      last?.removeAllListeners();
      last?.on("error", () => {});
      await last?.end().catch(() => {});
    },
  };
}
