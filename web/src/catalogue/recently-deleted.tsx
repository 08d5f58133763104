// Recently deleted: the books deleted among the change log's newest entries, and not brought
// back since, newest first, each with who deleted it, when, and a way to bring it back.
import { type Book, type BookCatalogueClient, CatalogueError, type Change } from "book-catalogue";
import { useEffect, useState } from "preact/hooks";
import { Modal } from "../modal.js";
import { describeFailure, endsSession } from "../session.js";
import { ago, fullTime } from "../words.js";
import { whoDid } from "./use-live.js";

/** How many of the log's newest entries are looked through. */
const LOOKED_AT = 2000;

/** The log's entries from `since` on. */
async function entriesFrom(client: BookCatalogueClient, since: number): Promise<Change[]> {
  const entries: Change[] = [];
  for (;;) {
    const page = await client.changesPage({ since });
    entries.push(...page.changes);
    if (page.next === since) return entries;
    since = page.next;
  }
}

/** The newest entries: fewer when the log keeps fewer (410 for where they would start). */
async function newestEntries(client: BookCatalogueClient): Promise<Change[]> {
  const newest = await client.newestChange();
  for (let count = LOOKED_AT; ; count = Math.floor(count / 2)) {
    try {
      return await entriesFrom(client, Math.max(0, newest - count));
    } catch (error) {
      if (!(error instanceof CatalogueError && error.status === 410 && count > 1)) throw error;
    }
  }
}

/** The deletes of `entries` whose book has not come back since, newest first. */
export function stillDeleted(entries: Change[]): Change[] {
  const last = new Map<number, Change>();
  for (const entry of entries) last.set(entry.id, entry);
  return [...last.values()].filter((entry) => entry.op === "delete").reverse();
}

interface Props {
  client: BookCatalogueClient;
  onRestored: (book: Book) => void;
  onClose: () => void;
  onFailure: (error: unknown) => void;
}

export function RecentlyDeletedDialog({ client, onRestored, onClose, onFailure }: Props) {
  const [deleted, setDeleted] = useState<Change[]>();
  const [refused, setRefused] = useState<string>();
  const failed = (error: unknown) =>
    endsSession(error) ? onFailure(error) : setRefused(describeFailure(error));
  useEffect(() => {
    newestEntries(client).then((entries) => setDeleted(stillDeleted(entries)), failed);
  }, []);
  const restore = async (id: number) => {
    try {
      onRestored(await client.restore(id));
    } catch (error) {
      if (error instanceof CatalogueError && error.status === 409) {
        setRefused("It is back already: someone brought it back meanwhile.");
      } else failed(error);
    }
  };

  return (
    <Modal title="Recently deleted" onCancel={onClose}>
      {deleted === undefined && !refused && <p role="status">Loading…</p>}
      {deleted?.length === 0 && <p>No book has been deleted lately.</p>}
      {deleted && deleted.length > 0 && (
        <ul class="history deleted">
          {deleted.map((entry) => (
            <Deleted key={entry.seq} entry={entry} onRestore={() => restore(entry.id)} />
          ))}
        </ul>
      )}
      {refused && (
        <p class="error" role="alert">
          {refused}
        </p>
      )}
      <div class="actions">
        <button type="button" class="quiet" onClick={onClose} autofocus>
          Close
        </button>
      </div>
    </Modal>
  );
}

/** Below the table, for the roles that may bring books back. */
export function RecentlyDeletedButton({ onOpen }: { onOpen: () => void }) {
  return (
    <p class="recently-deleted">
      <button type="button" class="quiet" onClick={onOpen}>
        Recently deleted
      </button>
    </p>
  );
}

function Deleted({ entry, onRestore }: { entry: Change; onRestore: () => Promise<void> }) {
  const book = entry.before;
  const [busy, setBusy] = useState(false);
  if (book === null) return null;
  return (
    <li>
      <div>
        <p>
          <strong>{book.title}</strong> by {book.author} ({book.year})
        </p>
        <p class="when">
          {whoDid(entry)} deleted it{" "}
          <time dateTime={entry.at} title={fullTime(entry.at)}>
            {ago(entry.at)}
          </time>
        </p>
      </div>
      <button
        type="button"
        class="secondary"
        disabled={busy}
        aria-label={`Bring back “${book.title}”`}
        onClick={async () => {
          setBusy(true);
          await onRestore();
          setBusy(false);
        }}
      >
        {busy ? "Bringing back…" : "Bring back"}
      </button>
    </li>
  );
}
