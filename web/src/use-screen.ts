// Which screen the page shows: the books, or the accounts at `#accounts` (the catalogue's own
// address is its query: `?q=…&sort=…`). Back and Forward move between them.
import { useEffect, useState } from "preact/hooks";

export type Screen = "books" | "accounts";

export const ACCOUNTS_ADDRESS = "#accounts";
export const BOOKS_ADDRESS = "#books";

const screenOfAddress = (): Screen => (location.hash === ACCOUNTS_ADDRESS ? "accounts" : "books");

export function useScreen(): Screen {
  const [screen, setScreen] = useState(screenOfAddress);
  useEffect(() => {
    const follow = () => setScreen(screenOfAddress());
    addEventListener("hashchange", follow);
    addEventListener("popstate", follow);
    return () => {
      removeEventListener("hashchange", follow);
      removeEventListener("popstate", follow);
    };
  }, []);
  return screen;
}

/** After signing out: the next to sign in starts at the books, whatever their role. */
export function leaveScreen(): void {
  if (location.hash !== "") history.replaceState(null, "", location.pathname + location.search);
}
