// The header: the title, the API's documentation, and who is signed in, with Change my
// password and Sign out.
import type { SignedIn } from "book-catalogue";
import { ROLE_NAMES } from "./roles.js";

interface Props {
  /** Who is signed in, once known; undefined before and while signed out. */
  me: SignedIn | undefined;
  signedIn: boolean;
  onChangePassword: () => void;
  onSignOut: () => void;
}

export function Header({ me, signedIn, onChangePassword, onSignOut }: Props) {
  return (
    <header class="bar">
      <h1>Book catalogue</h1>
      <nav class="bar-links" aria-label="Service">
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
      )}
    </header>
  );
}
