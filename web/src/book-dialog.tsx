import type { Book, BookCatalogueClient, BookChanges, Change } from "book-catalogue";
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { FieldInput } from "./field-input.js";
import { Modal } from "./modal.js";
import { describeFailure, endsSession, refusedBecause, refusedField } from "./session.js";
import { type BookVersion, isChanged, useBookVersion } from "./use-book-version.js";
import { checkDraft, checkField, type Draft, type Field, type Problems } from "./validate.js";
import { ago, fullTime } from "./words.js";

interface ActionProps {
  client: BookCatalogueClient;
  onCancel: () => void;
  /** A failure that ends the session (401); others are shown in the dialog. */
  onFailure: (error: unknown) => void;
}

/** What the dialog shows for a refusal, or undefined when the session ended instead. */
function refusal(error: unknown, onFailure: (error: unknown) => void): string | undefined {
  if (endsSession(error)) {
    onFailure(error);
    return undefined;
  }
  return describeFailure(error);
}

const FIELDS: { field: Field; label: string; hint?: string }[] = [
  { field: "title", label: "Title" },
  { field: "author", label: "Author" },
  { field: "year", label: "Year", hint: "A negative year is BC." },
];

const FIELD_NAMES = FIELDS.map(({ field }) => field);

/**
 * A 400 whose reason names a field of the form: shown beside that field, as the page's own
 * problems are (the service's rules may be stricter than this page's). False for any other.
 */
function showFieldRefusal(error: unknown, show: (problems: Problems) => void): boolean {
  const named = refusedField(error, FIELD_NAMES);
  if (named === undefined) return false;
  show({ [named.field]: refusedBecause(named.rule) });
  document.getElementById(`book-${named.field}`)?.focus();
  return true;
}

const draftOf = (book: Book | undefined): Draft => ({
  title: book?.title ?? "",
  author: book?.author ?? "",
  year: book ? String(book.year) : "",
});

/** How a dialog ended: the book saved, or another librarian's version kept instead. */
export type Outcome = "saved" | "kept";

export function BookDialog(
  props: ActionProps & { book: Book | undefined; onDone: (book: Book, outcome: Outcome) => void },
) {
  const { book } = props;
  const [draft, setDraft] = useState<Draft>(draftOf(book));
  const [problems, setProblems] = useState<Problems>({});
  const [refused, setRefused] = useState<string>();
  const [busy, setBusy] = useState(false);
  const version = useBookVersion(props.client, book, (error) =>
    setRefused(refusal(error, props.onFailure)),
  );
  const { theirs, saved, collided } = useTheirSave(props.client, book, version);
  // The book as first read with its version: what this librarian's changes are made against.
  const [base, setBase] = useState<Book>();
  useEffect(() => {
    if (version.tagged === undefined || base !== undefined) return;
    const stored = version.tagged.book;
    setBase(stored);
    // The stored book may be newer than the listing's row: shown until the librarian types.
    // Asked of the draft as it is when the change applies, not as this render saw it: what
    // was typed before the effect ran (it waits for the next frame) must stay.
    const untouched = JSON.stringify(draftOf(book));
    setDraft((now) => (JSON.stringify(now) === untouched ? draftOf(stored) : now));
  }, [version.tagged]);

  const change = (field: Field, value: string) => {
    setDraft({ ...draft, [field]: value });
    // A problem already shown is checked again as the librarian types, and goes once fixed.
    if (problems[field] !== undefined)
      setProblems({ ...problems, [field]: checkField(field, value) });
  };

  async function save(event: SubmitEvent) {
    event.preventDefault();
    const checked = checkDraft(draft);
    setProblems(checked.problems);
    if (checked.book === undefined) {
      const first = FIELDS.find(({ field }) => checked.problems[field] !== undefined);
      document.getElementById(`book-${first?.field}`)?.focus();
      return;
    }
    setBusy(true);
    setRefused(undefined);
    try {
      const saved = book
        ? (
            await props.client.updateTaggedBook(
              book.id,
              changedFields(checked.book, base ?? book),
              version.tagged?.etag ?? "",
            )
          ).book
        : await props.client.createBook(checked.book);
      props.onDone(saved, "saved");
    } catch (error) {
      if (isChanged(error)) {
        await collided();
      } else if (!showFieldRefusal(error, setProblems)) {
        setRefused(refusal(error, props.onFailure));
      }
      setBusy(false);
    }
  }
  const loading = book !== undefined && version.tagged === undefined && !version.gone;

  return (
    <Modal title={book ? "Edit book" : "Add a book"} onCancel={props.onCancel}>
      <form onSubmit={save} noValidate>
        {FIELDS.map(({ field, label, hint }) => (
          <FieldInput
            key={field}
            id={`book-${field}`}
            name={field}
            label={label}
            hint={hint}
            value={draft[field]}
            problem={problems[field]}
            inputMode={field === "year" ? "numeric" : undefined}
            onInput={(value) => change(field, value)}
            onBlur={(value) => setProblems({ ...problems, [field]: checkField(field, value) })}
          />
        ))}
        {version.gone && (
          <p class="error" role="alert">
            Someone has deleted this book. Cancel, or add it again as a new book.
          </p>
        )}
        {theirs && !version.gone && (
          <TheirSave theirs={theirs} base={base ?? theirs} saved={saved} />
        )}
        {refused && (
          <p class="error" role="alert">
            {refused}
          </p>
        )}
        <div class="actions">
          <button type="button" class="quiet" onClick={props.onCancel}>
            Cancel
          </button>
          {theirs && !version.gone && (
            <button type="button" class="quiet" onClick={() => props.onDone(theirs, "kept")}>
              Keep theirs
            </button>
          )}
          <button type="submit" disabled={busy || loading || version.gone}>
            {busy ? "Saving…" : loading ? "Loading…" : theirs ? "Keep mine" : "Save"}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** Another librarian's save that came first, and who made it when (the book's history). */
function useTheirSave(client: BookCatalogueClient, book: Book | undefined, version: BookVersion) {
  const [theirs, setTheirs] = useState<Book>();
  const [saved, setSaved] = useState<Change>();
  /** After a 412: the stored version becomes the one a second Save goes onto ("Keep mine"). */
  const collided = async () => {
    const [current, history] = await Promise.all([
      version.reload(),
      book && client.history(book.id).catch(() => undefined),
    ]);
    setSaved(history?.at(-1));
    setTheirs(current?.book);
  };
  return { theirs, saved, collided };
}

/**
 * Only the fields this librarian changed from the book as read: a save then keeps what
 * another librarian changed in the other fields.
 */
function changedFields(draft: Omit<Book, "id">, base: Book): BookChanges {
  const fields = ["title", "author", "year"] as const;
  return Object.fromEntries(fields.filter((f) => draft[f] !== base[f]).map((f) => [f, draft[f]]));
}

/** Another librarian's save, beside the form that still holds what this librarian typed. */
function TheirSave({ theirs, base, saved }: { theirs: Book; base: Book; saved?: Change }) {
  const rows = FIELDS.map(({ field, label }) => ({
    label,
    value: String(theirs[field]),
    changed: theirs[field] !== base[field],
  }));
  return (
    <div class="conflict" role="alert">
      <p>
        <strong>
          <WhoSaved saved={saved} />
        </strong>{" "}
        Their version is below, their changes marked; yours is still in the form. Keep mine saves
        the fields you changed over theirs; their other changes stay.
      </p>
      <dl>
        {rows.map(({ label, value, changed }) => (
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd>
              {value}
              {changed && <span class="changed"> (changed)</span>}
            </dd>
          </Fragment>
        ))}
      </dl>
    </div>
  );
}

/** Who saved the book and when, from its history: "ana saved this book 2 minutes ago, …". */
function WhoSaved({ saved }: { saved: Change | undefined }) {
  if (saved === undefined) return <>Another librarian saved this book while you were editing it.</>;
  return (
    <>
      {saved.by?.name ?? "Someone"} saved this book{" "}
      <time dateTime={saved.at} title={fullTime(saved.at)}>
        {ago(saved.at)}
      </time>
      , while you were editing it.
    </>
  );
}

export function ConfirmDelete(props: ActionProps & { book: Book; onDone: () => void }) {
  const [refused, setRefused] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [changed, setChanged] = useState(false);
  const version = useBookVersion(props.client, props.book, (error) =>
    setRefused(refusal(error, props.onFailure)),
  );
  const shown = version.tagged?.book ?? props.book;

  async function remove() {
    setBusy(true);
    try {
      await props.client.deleteBook(props.book.id, { ifMatch: version.tagged?.etag ?? "" });
      props.onDone();
    } catch (error) {
      // Changed since it was shown: show it as it is now, and delete that only if asked again.
      if (isChanged(error)) setChanged((await version.reload()) !== undefined);
      else setRefused(refusal(error, props.onFailure));
      setBusy(false);
    }
  }
  const ready = version.tagged !== undefined && !version.gone;

  return (
    <Modal title="Delete this book?" onCancel={props.onCancel}>
      {changed && (
        <p class="conflict" role="alert">
          <strong>Another librarian changed this book while you were deciding.</strong> This is it
          now.
        </p>
      )}
      <p>
        “{shown.title}” by {shown.author} ({shown.year}) will be removed from the catalogue. For a
        few seconds after, Undo brings it back.
      </p>
      {version.gone && (
        <p class="error" role="alert">
          Someone has already deleted this book.
        </p>
      )}
      {refused && (
        <p class="error" role="alert">
          {refused}
        </p>
      )}
      <div class="actions">
        <button type="button" class="quiet" onClick={props.onCancel} autofocus>
          Keep it
        </button>
        <button type="button" class="danger" disabled={busy || !ready} onClick={remove}>
          {busy ? "Deleting…" : changed ? "Delete it anyway" : "Delete"}
        </button>
      </div>
    </Modal>
  );
}
