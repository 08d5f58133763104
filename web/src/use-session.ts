// The tab's session: signing in and out, who is signed in (asked again after a reload), the
// end of a token that cannot be renewed, and signing in again after a change of password.
import { useEffect, useState } from "preact/hooks";
import {
  ASK_AGAIN_BEFORE_MS,
  describeFailure,
  forgetSession,
  restoreSession,
  type Session,
  signIn,
} from "./session.js";

export function useSession() {
  const [session, setSession] = useState<Session | undefined>(restoreSession);
  const [notice, setNotice] = useState<string>();

  const end = (why?: string) => {
    forgetSession();
    setSession(undefined);
    setNotice(why);
  };
  /** A failure that ends the session (a refused token): said on the sign-in form. */
  const ended = (error: unknown) => end(describeFailure(error));
  useExpiry(session, end);
  useSignedIn(session, setSession, ended);

  const started = (begun: Session) => {
    setNotice(undefined);
    setSession(begun);
  };
  // A new password ends every token of the account: sign in again with it, at once.
  const passwordChanged = async (password: string) => {
    try {
      setSession(await signIn(session?.me?.name ?? "", password));
      setNotice("Your password has been changed.");
    } catch {
      end("Your password has been changed. Sign in with the new one.");
    }
  };
  return { session, notice, setNotice, started, end, ended, passwordChanged };
}

// Without the password the token cannot be renewed: ask for it again before it expires.
function useExpiry(session: Session | undefined, end: (why: string) => void) {
  useEffect(() => {
    if (session === undefined || session.renewable) return;
    const timer = setTimeout(
      () => end("Your session is about to expire. Sign in again to go on."),
      Math.max(0, session.expiresAt - ASK_AGAIN_BEFORE_MS - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [session]);
}

/** After a reload, who is signed in is asked of the service before anything a role decides. */
function useSignedIn(
  session: Session | undefined,
  setSession: (session: Session) => void,
  onFailure: (error: unknown) => void,
) {
  useEffect(() => {
    if (session === undefined || session.me !== undefined) return;
    let current = true;
    session.client.signedIn().then(
      (me) => current && setSession({ ...session, me }),
      (error: unknown) => current && onFailure(error),
    );
    return () => {
      current = false;
    };
  }, [session]);
}
