// Signing in: the token is kept in sessionStorage (this tab only, gone when it closes), and
// the password only in memory, to renew the token before it expires.
import {
  type BookCatalogueClient,
  CatalogueError,
  createClient,
  expiresAt,
  type SignedIn,
} from "book-catalogue";

const TOKEN_KEY = "book-catalogue.token";
/** A session without the password is ended this long before its token expires. */
export const ASK_AGAIN_BEFORE_MS = 60_000;

export interface Session {
  client: BookCatalogueClient;
  /** False after a reload: the password is gone, so the token cannot be renewed. */
  renewable: boolean;
  expiresAt: number;
  /** Who is signed in, and their role: asked of the service after a reload. */
  me: SignedIn | undefined;
}

export async function signIn(username: string, password: string): Promise<Session> {
  const client = createClient({
    baseUrl: location.origin,
    username,
    password,
    onToken: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  });
  const token = await client.token();
  const me = await client.signedIn();
  return { client, renewable: true, expiresAt: expiresAt(token), me };
}

/** The tab's session from before a reload, while its token has time left. */
export function restoreSession(): Session | undefined {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token === null) return undefined;
  const until = expiresAt(token);
  if (until - Date.now() <= ASK_AGAIN_BEFORE_MS) {
    forgetSession();
    return undefined;
  }
  return {
    client: createClient({ baseUrl: location.origin, token }),
    renewable: false,
    expiresAt: until,
    me: undefined,
  };
}

export function forgetSession(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** A refused token: the session is over, whatever the page was doing. */
export function endsSession(error: unknown): boolean {
  return error instanceof CatalogueError && error.status === 401;
}

/** What went wrong, for a person: the service's own message where it gave one. */
export function describeFailure(error: unknown, signingIn = false): string {
  // Status 0: no answer came at all.
  if (!(error instanceof CatalogueError) || error.status === 0) {
    return "The catalogue service cannot be reached. Check the connection and try again.";
  }
  switch (error.status) {
    case 401:
      return signingIn
        ? "The username or password is wrong."
        : "Your session has ended. Sign in again.";
    case 403:
      return "Your role does not allow this. An administrator can change your role.";
    case 429:
      return "Too many failed sign-ins. Wait a minute, then try again.";
    case 503:
      return "The catalogue is unavailable right now. Try again in a moment.";
    default:
      return error.reason
        ? `The service refused: ${error.message} (${error.reason}).`
        : `The service refused: ${error.message}.`;
  }
}

/** A rule of the service's, shown beside the field it refused. */
export const refusedBecause = (rule: string) => `The service refused it: ${rule}.`;

/**
 * The field a 400 names in its reason (`title: at most 500 characters`) and its rule, when it
 * is one of `fields`: the page shows the rule beside that field.
 */
export function refusedField<F extends string>(
  error: unknown,
  fields: readonly F[],
): { field: F; rule: string } | undefined {
  if (!(error instanceof CatalogueError) || error.status !== 400 || !error.reason) return undefined;
  const [, name, rule] = /^([^:]+): (.+)$/.exec(error.reason) ?? [];
  const field = fields.find((f) => f === name);
  return field === undefined || rule === undefined ? undefined : { field, rule };
}
