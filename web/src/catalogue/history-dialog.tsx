// A book's history, from the change log: who did what and when, newest first, each field an
// edit changed from what to what.
import type { Book, BookCatalogueClient, Change } from "book-catalogue";
import { useEffect, useState } from "preact/hooks";
import { Modal } from "../modal.js";
import { describeFailure, endsSession } from "../session.js";
import { ago, fullTime } from "../words.js";
import { whoDid } from "./use-live.js";

const DONE: Record<Change["op"], string> = {
  create: "added it",
  update: "edited it",
  delete: "deleted it",
  restore: "brought it back",
};

const FIELDS = [
  { field: "title", label: "Title" },
  { field: "author", label: "Author" },
  { field: "year", label: "Year" },
] as const;

interface Props {
  client: BookCatalogueClient;
  book: Book;
  onClose: () => void;
  onFailure: (error: unknown) => void;
}

export function HistoryDialog({ client, book, onClose, onFailure }: Props) {
  const [entries, setEntries] = useState<Change[]>();
  const [refused, setRefused] = useState<string>();
  useEffect(() => {
    client.history(book.id).then(
      (read) => setEntries(read.reverse()),
      (error: unknown) =>
        endsSession(error) ? onFailure(error) : setRefused(describeFailure(error)),
    );
  }, [book.id]);

  return (
    <Modal title={`History of “${book.title}”`} onCancel={onClose}>
      {entries === undefined && !refused && <p role="status">Loading…</p>}
      {refused && (
        <p class="error" role="alert">
          {refused}
        </p>
      )}
      {entries?.length === 0 && (
        <p>No change to this book is kept: the catalogue keeps its changes for a while only.</p>
      )}
      {entries && entries.length > 0 && (
        <ol class="history">
          {entries.map((entry) => (
            <Entry key={entry.seq} entry={entry} />
          ))}
        </ol>
      )}
      <div class="actions">
        <button type="button" onClick={onClose} autofocus>
          Close
        </button>
      </div>
    </Modal>
  );
}

function Entry({ entry }: { entry: Change }) {
  const { book, before } = entry;
  const fields =
    entry.op === "update" && book && before
      ? FIELDS.filter(({ field }) => book[field] !== before[field])
      : [];
  const shown = entry.op === "create" || entry.op === "restore" ? book : undefined;
  return (
    <li>
      <p>
        <strong>{whoDid(entry)}</strong> {DONE[entry.op]}{" "}
        <time dateTime={entry.at} title={fullTime(entry.at)}>
          {ago(entry.at)}
        </time>
      </p>
      {shown && (
        <p class="history-book">
          “{shown.title}” by {shown.author} ({shown.year})
        </p>
      )}
      {fields.length > 0 && book && before && (
        <dl>
          {fields.map(({ field, label }) => (
            <div key={field}>
              <dt>{label}</dt>
              <dd>
                {String(before[field])} <span aria-hidden="true">→</span>
                <span class="visually-hidden">to</span> {String(book[field])}
              </dd>
            </div>
          ))}
        </dl>
      )}
    </li>
  );
}
