// Signing in again over the page, when a token that cannot be renewed (the password is not
// kept across a reload) nears its end: what the librarian was doing (an edit half typed, a
// search, a page) stays as it is behind the dialog.
import { Modal } from "./modal.js";
import type { Session } from "./session.js";
import { useSignInForm } from "./sign-in.js";

interface Props {
  /** Who is signed in; undefined when the service was not asked yet (then it is typed). */
  name: string | undefined;
  /** Whether the service has refused the token meanwhile. */
  ended: boolean;
  onSignedIn: (session: Session) => void;
  onSignOut: () => void;
}

export function SignInAgainDialog({ name, ended, onSignedIn, onSignOut }: Props) {
  const { failure, busy, submit } = useSignInForm(onSignedIn);

  // Escape does not close it: the page behind waits for the password, or for Sign out.
  return (
    <Modal title="Sign in again" onCancel={() => {}}>
      <form class="sign-in-again" onSubmit={submit}>
        <p class="notice" role="status">
          {ended ? "Your session has ended." : "Your session is about to expire."} Type your
          password to go on: what you were doing stays as it is.
        </p>
        <label>
          Username
          <input
            name="username"
            autocomplete="username"
            required
            readOnly={name !== undefined}
            value={name}
            autofocus={name === undefined}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            required
            autofocus={name !== undefined}
          />
        </label>
        {failure && (
          <p class="error" role="alert">
            {failure}
          </p>
        )}
        <div class="actions">
          <button type="button" class="quiet" onClick={onSignOut}>
            Sign out
          </button>
          <button type="submit" disabled={busy}>
            {busy ? "Signing in…" : "Sign in"}
          </button>
        </div>
      </form>
    </Modal>
  );
}
