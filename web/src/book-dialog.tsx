import type { Book, BookCatalogueClient } from "book-catalogue";
import { useState } from "preact/hooks";
import { Modal } from "./modal.js";
import { describeFailure, endsSession } from "./session.js";
import { checkDraft, checkField, type Draft, type Field, type Problems } from "./validate.js";

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

export function BookDialog(
  props: ActionProps & { book: Book | undefined; onDone: (saved: Book) => void },
) {
  const { book } = props;
  const [draft, setDraft] = useState<Draft>({
    title: book?.title ?? "",
    author: book?.author ?? "",
    year: book ? String(book.year) : "",
  });
  const [problems, setProblems] = useState<Problems>({});
  const [refused, setRefused] = useState<string>();
  const [busy, setBusy] = useState(false);

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
        ? await props.client.updateBook(book.id, checked.book)
        : await props.client.createBook(checked.book);
      props.onDone(saved);
    } catch (error) {
      setRefused(refusal(error, props.onFailure));
      setBusy(false);
    }
  }

  return (
    <Modal title={book ? "Edit book" : "Add a book"} onCancel={props.onCancel}>
      <form onSubmit={save} noValidate>
        {FIELDS.map(({ field, label, hint }) => {
          const problem = problems[field];
          const described = [hint && `book-${field}-hint`, problem && `book-${field}-problem`]
            .filter(Boolean)
            .join(" ");
          return (
            <div class="field" key={field}>
              <label for={`book-${field}`}>{label}</label>
              <input
                id={`book-${field}`}
                name={field}
                value={draft[field]}
                inputMode={field === "year" ? "numeric" : undefined}
                aria-invalid={problem !== undefined}
                aria-describedby={described || undefined}
                onInput={(event) => change(field, event.currentTarget.value)}
                onBlur={(event) =>
                  setProblems({
                    ...problems,
                    [field]: checkField(field, event.currentTarget.value),
                  })
                }
              />
              {hint && (
                <p class="hint" id={`book-${field}-hint`}>
                  {hint}
                </p>
              )}
              {problem && (
                <p class="problem" id={`book-${field}-problem`}>
                  {problem}
                </p>
              )}
            </div>
          );
        })}
        {refused && (
          <p class="error" role="alert">
            {refused}
          </p>
        )}
        <div class="actions">
          <button type="button" class="quiet" onClick={props.onCancel}>
            Cancel
          </button>
          <button type="submit" disabled={busy}>
            {busy ? "Saving…" : "Save"}
          </button>
        </div>
      </form>
    </Modal>
  );
}

export function ConfirmDelete(props: ActionProps & { book: Book; onDone: () => void }) {
  const [refused, setRefused] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function remove() {
    setBusy(true);
    try {
      await props.client.deleteBook(props.book.id);
      props.onDone();
    } catch (error) {
      setRefused(refusal(error, props.onFailure));
      setBusy(false);
    }
  }

  return (
    <Modal title="Delete this book?" onCancel={props.onCancel}>
      <p>
        “{props.book.title}” by {props.book.author} ({props.book.year}) will be removed from the
        catalogue. This cannot be undone.
      </p>
      {refused && (
        <p class="error" role="alert">
          {refused}
        </p>
      )}
      <div class="actions">
        <button type="button" class="quiet" onClick={props.onCancel} autofocus>
          Keep it
        </button>
        <button type="button" class="danger" disabled={busy} onClick={remove}>
          {busy ? "Deleting…" : "Delete"}
        </button>
      </div>
    </Modal>
  );
}
