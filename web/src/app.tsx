import { useEffect, useState } from "preact/hooks";
import { AccountsScreen } from "./accounts/accounts-screen.js";
import { Catalogue } from "./catalogue.js";
import { ChangePasswordDialog } from "./change-password.js";
import { Header } from "./header.js";
import { editsBooks } from "./roles.js";
import type { Session } from "./session.js";
import { SignIn } from "./sign-in.js";
import { SignInAgainDialog } from "./sign-in-again.js";
import { leaveScreen, type Screen, useScreen } from "./use-screen.js";
import { useSession } from "./use-session.js";

export function App() {
  const { session, notice, setNotice, started, end, lost, ended, passwordChanged, askingAgain } =
    useSession();
  const signOut = () => {
    leaveScreen();
    end("You have signed out.");
  };
  const [changing, setChanging] = useState(false);
  const screen = useScreen();
  // A notice of one screen (the password changed) is not carried to the next.
  useEffect(() => setNotice(undefined), [screen]);
  // A session that ends closes the dialog with it: it does not come back at the next sign-in.
  useEffect(() => {
    if (session === undefined) setChanging(false);
  }, [session]);

  return (
    <>
      <Header
        me={session?.me}
        signedIn={session !== undefined}
        screen={screen}
        onChangePassword={() => setChanging(true)}
        onSignOut={signOut}
      />
      <main>
        {session ? (
          <SignedInScreen
            session={session}
            screen={screen}
            notice={notice}
            onSessionEnded={lost}
            onFailure={ended}
          />
        ) : (
          <SignIn notice={notice} onSignedIn={started} />
        )}
      </main>
      {changing && session && (
        <ChangePasswordDialog
          client={session.client}
          onChanged={async (password) => {
            await passwordChanged(password);
            setChanging(false);
          }}
          onCancel={() => setChanging(false)}
          onFailure={ended}
        />
      )}
      {askingAgain && session && (
        <SignInAgainDialog
          name={session.me?.name}
          ended={askingAgain === "ended"}
          onSignedIn={started}
          onSignOut={signOut}
        />
      )}
    </>
  );
}

/** The screen asked for, once the role is known: the books, or the accounts. */
function SignedInScreen(props: {
  session: Session;
  screen: Screen;
  notice: string | undefined;
  onSessionEnded: (why: string) => void;
  /** A failure that ends the session, for the accounts screen to hand on. */
  onFailure: (error: unknown) => void;
}) {
  const { session, screen, notice, onFailure } = props;
  const { me, client } = session;
  if (me === undefined) return <p role="status">Loading…</p>;
  return (
    <>
      {notice && (
        <p class="notice page-notice" role="status">
          {notice}
        </p>
      )}
      {screen === "accounts" ? (
        <AccountsScreen client={client} me={me} onFailure={onFailure} />
      ) : (
        <Catalogue
          client={client}
          me={me}
          writable={editsBooks(me.role)}
          onSessionEnded={props.onSessionEnded}
        />
      )}
    </>
  );
}
