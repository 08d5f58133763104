// The header: the title, the screens (Books and Accounts, for administrators), the API's
// documentation, and who is signed in, with Change my password and Sign out.
import type { SignedIn } from "book-catalogue";
import { ROLE_NAMES } from "./roles.js";
import { ACCOUNTS_ADDRESS, BOOKS_ADDRESS, type Screen } from "./use-screen.js";

interface Props {
  /** Who is signed in, once known; undefined before and while signed out. */
  me: SignedIn | undefined;
  signedIn: boolean;
  screen: Screen;
  onChangePassword: () => void;
  onSignOut: () => void;
}

export function Header({ me, signedIn, screen, onChangePassword, onSignOut }: Props) {
  const current = (shown: Screen) => (screen === shown ? "page" : undefined);
  return (
    <header class="bar">
      <h1>Book catalogue</h1>
      <nav class="bar-links" aria-label="Service">
        {me?.role === "admin" && (
          <>
            <a href={BOOKS_ADDRESS} aria-current={current("books")}>
              Books
            </a>
            <a href={ACCOUNTS_ADDRESS} aria-current={current("accounts")}>
              Accounts
            </a>
          </>
        )}
        <a href="/docs">API documentation</a>
      </nav>
      {signedIn && (
        <div class="bar-account">
          {me && (
            <p class="who" title={`${me.name}, ${ROLE_NAMES[me.role]}`}>
              <span class="visually-hidden">Signed in as </span>
              <strong class="who-name">{me.name}</strong>{" "}
              <span class="who-role">{ROLE_NAMES[me.role]}</span>
            </p>
          )}
          <div class="bar-buttons">
            {/* The built-in pair's password is set where the service runs, not here. */}
            {me && me.id !== null && (
              <button type="button" class="quiet" onClick={onChangePassword}>
                Change my password
              </button>
            )}
            <button type="button" class="quiet" onClick={onSignOut}>
              Sign out
            </button>
          </div>
        </div>
      )}
    </header>
  );
}
