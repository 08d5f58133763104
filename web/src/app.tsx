import { Catalogue } from "./catalogue.js";
import { Header } from "./header.js";
import { editsBooks } from "./roles.js";
import type { Session } from "./session.js";
import { SignIn } from "./sign-in.js";
import { useSession } from "./use-session.js";

export function App() {
  const { session, notice, started, end } = useSession();
  return (
    <>
      <Header
        me={session?.me}
        signedIn={session !== undefined}
        onSignOut={() => end("You have signed out.")}
      />
      <main>
        {session ? (
          <SignedInScreen session={session} onSessionEnded={end} />
        ) : (
          <SignIn notice={notice} onSignedIn={started} />
        )}
      </main>
    </>
  );
}

/** The catalogue, once the role is known: it offers only what the role allows. */
function SignedInScreen(props: { session: Session; onSessionEnded: (why: string) => void }) {
  const { me, client } = props.session;
  if (me === undefined) return <p role="status">Loading…</p>;
  return (
    <Catalogue
      client={client}
      writable={editsBooks(me.role)}
      onSessionEnded={props.onSessionEnded}
    />
  );
}
