// The sign-in form: a name and password, and why the last try failed.
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { describeFailure, type Session, signIn } from "./session.js";

/**
 * A form's sign-in with its `username` and `password` fields: busy while the service answers,
 * why the last try failed, and whether one was made. Here and over the page (sign-in-again.tsx).
 */
export function useSignInForm(onSignedIn: (session: Session) => void) {
  const [failure, setFailure] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [tried, setTried] = useState(false);
  async function submit(event: SubmitEvent) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setTried(true);
    setFailure(undefined);
    try {
      onSignedIn(await signIn(String(form.get("username")), String(form.get("password"))));
    } catch (error) {
      setFailure(describeFailure(error, true));
      setBusy(false);
    }
  }
  return { failure, busy, tried, submit };
}

export function SignIn(props: {
  notice: string | undefined;
  onSignedIn: (session: Session) => void;
}) {
  // Why the form is shown ("You have signed out."), until the first try: then what it met.
  const { failure, busy, tried, submit } = useSignInForm(props.onSignedIn);
  // Shown after Sign out too, not only as the page loads (where autofocus would do).
  const username = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => username.current?.focus(), []);

  return (
    <form class="card sign-in" onSubmit={submit} aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">Sign in</h2>
      {props.notice && !tried && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <label>
        Username
        <input ref={username} name="username" autocomplete="username" required autofocus />
      </label>
      <label>
        Password
        <input name="password" type="password" autocomplete="current-password" required />
      </label>
      {failure && (
        <p class="error" role="alert">
          {failure}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
