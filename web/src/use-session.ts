// The tab's session: signing in and out, who is signed in (asked again after a reload), the
// end of a token that cannot be renewed, and signing in again after a change of password.
import { useEffect, useRef, useState } from "preact/hooks";
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
  const again = useAskAgain();

  const end = (why?: string) => {
    again.stop();
    forgetSession();
    setSession(undefined);
    setNotice(why);
  };
  /**
   * The session is lost (a refused token): said on the sign-in form; while the password is
   * being asked again over the page, the dialog says it instead, and the page stays.
   */
  const lost = (why: string) => (again.asking.current ? again.expired() : end(why));
  const ended = (error: unknown) => lost(describeFailure(error));
  useExpiry(session, again.start);
  useSignedIn(session, setSession, ended);

  const started = (begun: Session) => {
    again.stop();
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
  const askingAgain = again.state;
  return { session, notice, setNotice, started, end, lost, ended, passwordChanged, askingAgain };
}

/**
 * Whether the password is asked again over the page ("ending": the token's end is near;
 * "ended": the service has refused it meanwhile); a ref too, for callbacks made before.
 */
function useAskAgain() {
  const [state, setState] = useState<"ending" | "ended">();
  const asking = useRef(false);
  const set = (to: typeof state) => {
    asking.current = to !== undefined;
    setState(to);
  };
  return {
    state,
    asking,
    start: () => set("ending"),
    expired: () => set("ended"),
    stop: () => set(undefined),
  };
}

// Without the password the token cannot be renewed: ask for it again before it expires.
function useExpiry(session: Session | undefined, ask: () => void) {
  useEffect(() => {
    if (session === undefined || session.renewable) return;
    const timer = setTimeout(
      ask,
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
