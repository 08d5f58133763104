import { searchTerms } from "@book-catalogue/rules/search.js";
import { useRef } from "preact/hooks";

interface Props {
  /** The search as typed. */
  value: string;
  onInput: (value: string) => void;
  /** Search for this: 300 ms after the last key, or at once on Enter. */
  onSearch: (q: string) => void;
}

export function SearchBar({ value, onInput, onSearch }: Props) {
  const timer = useRef<ReturnType<typeof setTimeout>>();
  const noWord = value.trim() !== "" && searchTerms(value).length === 0;
  return (
    <search>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          clearTimeout(timer.current);
          onSearch(value);
        }}
      >
        <label for="search">Search titles and authors</label>
        <input
          id="search"
          type="search"
          dir="auto"
          value={value}
          onInput={(event) => {
            const typed = event.currentTarget.value;
            onInput(typed);
            clearTimeout(timer.current);
            timer.current = setTimeout(() => onSearch(typed), 300);
          }}
          maxLength={200}
          aria-describedby={noWord ? "search-hint" : undefined}
        />
        {noWord && (
          <p class="hint" id="search-hint">
            A search needs a letter or a digit.
          </p>
        )}
      </form>
    </search>
  );
}
