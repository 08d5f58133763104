// The accounts, as the service lists them for an administrator; a 403 (a role that may not
// manage accounts, reaching the screen by its address) is kept apart, to be said plainly.
import { type Account, type BookCatalogueClient, CatalogueError } from "book-catalogue";
import { useEffect, useState } from "preact/hooks";
import { describeFailure, endsSession } from "../session.js";

export function useAccounts(client: BookCatalogueClient, onFailure: (error: unknown) => void) {
  const [accounts, setAccounts] = useState<Account[]>();
  const [forbidden, setForbidden] = useState(false);
  const [failure, setFailure] = useState<string>();

  /** What every call of the screen does with a failure: a 401 ends the session. */
  const fail = (error: unknown) => {
    if (endsSession(error)) onFailure(error);
    else if (error instanceof CatalogueError && error.status === 403) setForbidden(true);
    else setFailure(describeFailure(error));
  };
  const reload = async () => {
    try {
      setAccounts(await client.listAccounts());
      setFailure(undefined);
    } catch (error) {
      fail(error);
    }
  };
  useEffect(() => {
    void reload();
  }, [client]);

  /** An account as the service answered a change of it. */
  const replace = (changed: Account) =>
    setAccounts((all) => all?.map((account) => (account.id === changed.id ? changed : account)));
  return { accounts, forbidden, failure, fail, reload, replace };
}
