import { useEffect, useState } from "preact/hooks";
import { Catalogue } from "./catalogue.js";
import {
  ASK_AGAIN_BEFORE_MS,
  describeFailure,
  forgetSession,
  restoreSession,
  type Session,
  signIn,
} from "./session.js";

export function App() {
  const [session, setSession] = useState<Session | undefined>(restoreSession);
  const [notice, setNotice] = useState<string>();

  const end = (why?: string) => {
    forgetSession();
    setSession(undefined);
    setNotice(why);
  };

  // Without the password the token cannot be renewed: ask for it again before it expires.
  useEffect(() => {
    if (session === undefined || session.renewable) return;
    const timer = setTimeout(
      () => end("Your session is about to expire. Sign in again to go on."),
      Math.max(0, session.expiresAt - ASK_AGAIN_BEFORE_MS - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [session]);

  return (
    <>
      <header class="bar">
        <h1>Book catalogue</h1>
        <nav class="bar-links" aria-label="Service">
          <a href="/docs">API documentation</a>
          {session && (
            <button type="button" class="quiet" onClick={() => end("You have signed out.")}>
              Sign out
            </button>
          )}
        </nav>
      </header>
      <main>
        {session ? (
          <Catalogue client={session.client} onSessionEnded={end} />
        ) : (
          <SignIn
            notice={notice}
            onSignedIn={(started) => {
              setNotice(undefined);
              setSession(started);
            }}
          />
        )}
      </main>
    </>
  );
}

function SignIn(props: { notice: string | undefined; onSignedIn: (session: Session) => void }) {
  const [failure, setFailure] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: SubmitEvent) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setFailure(undefined);
    try {
      props.onSignedIn(await signIn(String(form.get("username")), String(form.get("password"))));
    } catch (error) {
      setFailure(describeFailure(error, true));
      setBusy(false);
    }
  }

  return (
    <form class="card sign-in" onSubmit={submit} aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">Sign in</h2>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <label>
        Username
        <input name="username" autocomplete="username" required autofocus />
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
