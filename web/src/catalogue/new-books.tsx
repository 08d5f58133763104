// Books other librarians added that are not on the page shown: counted, with a way to see the
// newest (its page, as for a book just added: use-moves.ts).
import type { Book } from "book-catalogue";
import { plural } from "../words.js";
import type { LiveState } from "./use-live.js";

export function NewBooksNotice(props: { live: LiveState; onShow: (book: Book) => void }) {
  const { unseen, clearUnseen } = props.live;
  const newest = unseen.at(-1);
  const show = (book: Book) => {
    clearUnseen();
    props.onShow(book);
  };
  return (
    <div aria-live="polite">
      {newest && (
        <p class="notice new-books">
          {unseen.length === 1
            ? `1 new book, not on this page: “${newest.title}”.`
            : `${plural(unseen.length, "new book")}, not on this page.`}{" "}
          <button type="button" class="quiet" onClick={() => show(newest)}>
            {unseen.length === 1 ? "Show it" : "Show the newest"}
          </button>
        </p>
      )}
    </div>
  );
}
