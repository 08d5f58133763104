import { useEffect, useState } from "preact/hooks";
import { Catalogue } from "./catalogue.js";
import { ChangePasswordDialog } from "./change-password.js";
import { Header } from "./header.js";
import { editsBooks } from "./roles.js";
import type { Session } from "./session.js";
import { SignIn } from "./sign-in.js";
import { useSession } from "./use-session.js";

export function App() {
  const { session, notice, started, end, ended, passwordChanged } = useSession();
  const [changing, setChanging] = useState(false);
  // A session that ends closes the dialog with it: it does not come back at the next sign-in.
  useEffect(() => {
    if (session === undefined) setChanging(false);
  }, [session]);

  return (
    <>
      <Header
        me={session?.me}
        signedIn={session !== undefined}
        onChangePassword={() => setChanging(true)}
        onSignOut={() => end("You have signed out.")}
      />
      <main>
        {session ? (
          <SignedInScreen session={session} notice={notice} onSessionEnded={end} />
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
    </>
  );
}

/** The catalogue, once the role is known: it offers only what the role allows. */
function SignedInScreen(props: {
  session: Session;
  notice: string | undefined;
  onSessionEnded: (why: string) => void;
}) {
  const { session, notice } = props;
  const { me, client } = session;
  if (me === undefined) return <p role="status">Loading…</p>;
  return (
    <>
      {notice && (
        <p class="notice page-notice" role="status">
          {notice}
        </p>
      )}
      <Catalogue
        client={client}
        writable={editsBooks(me.role)}
        onSessionEnded={props.onSessionEnded}
      />
    </>
  );
}
