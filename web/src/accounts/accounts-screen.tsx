// The Accounts screen, for administrators: every account, adding one, and what can be done to
// each. Another role reaching it by its address is told plainly that it may not.
import type { Account, BookCatalogueClient, SignedIn } from "book-catalogue";
import { useState } from "preact/hooks";
import { FailureNotice } from "../catalogue/failure.js";
import { BOOKS_ADDRESS } from "../use-screen.js";
import {
  AddAccountDialog,
  RemoveAccountDialog,
  ResetPasswordDialog,
  RoleDialog,
} from "./account-dialogs.js";
import { type AccountAction, AccountTable } from "./account-table.js";
import { useAccounts } from "./use-accounts.js";

interface Props {
  client: BookCatalogueClient;
  me: SignedIn;
  /** A failure that ends the session (401). */
  onFailure: (error: unknown) => void;
}

type Managing = { action: "add" } | { action: "role" | "reset" | "remove"; account: Account };

export function AccountsScreen({ client, me, onFailure }: Props) {
  const { accounts, forbidden, failure, fail, reload, replace } = useAccounts(client, onFailure);
  const [managing, setManaging] = useState<Managing>();
  const [announcement, setAnnouncement] = useState("");
  if (forbidden) return <Forbidden />;

  const done = (message: string, changed?: Account) => {
    setManaging(undefined);
    setAnnouncement(message);
    if (changed) replace(changed);
    else void reload();
  };
  const act = async (action: AccountAction, account: Account) => {
    if (action !== "enable" && action !== "disable") return setManaging({ action, account });
    try {
      const changed = await client.updateAccount(account.id, { enabled: action === "enable" });
      done(changed.enabled ? `Enabled ${changed.name}.` : `Disabled ${changed.name}.`, changed);
    } catch (error) {
      fail(error);
    }
  };

  return (
    <section aria-labelledby="accounts-title" class="accounts-screen">
      <div class="accounts-tools">
        <div>
          <h2 id="accounts-title">Accounts</h2>
          <p class="hint">Who can sign in, and what each may do.</p>
        </div>
        <button type="button" onClick={() => setManaging({ action: "add" })}>
          Add an account
        </button>
      </div>
      {me.id === null && (
        <p class="notice">
          You are signed in as the built-in administrator, <strong>{me.name}</strong>: its password
          is set where the service runs, not here.
        </p>
      )}
      {failure && <FailureNotice failure={failure} onRetry={() => void reload()} />}
      <p class="visually-hidden" role="status">
        {announcement}
      </p>
      {accounts?.length === 0 && (
        <p class="empty">No account yet: only the built-in administrator can sign in.</p>
      )}
      {accounts && accounts.length > 0 && (
        <AccountTable accounts={accounts} me={me.id} onAction={(a, b) => void act(a, b)} />
      )}
      {managing && (
        <ManagingDialog
          managing={managing}
          client={client}
          onDone={done}
          onCancel={() => setManaging(undefined)}
          onFailure={onFailure}
        />
      )}
    </section>
  );
}

function ManagingDialog(props: {
  managing: Managing;
  client: BookCatalogueClient;
  onDone: (message: string, changed?: Account) => void;
  onCancel: () => void;
  onFailure: (error: unknown) => void;
}) {
  const { managing, ...actions } = props;
  switch (managing.action) {
    case "add":
      return <AddAccountDialog {...actions} />;
    case "role":
      return <RoleDialog {...actions} account={managing.account} />;
    case "reset":
      return <ResetPasswordDialog {...actions} account={managing.account} />;
    case "remove":
      return <RemoveAccountDialog {...actions} account={managing.account} />;
  }
}

function Forbidden() {
  return (
    <section aria-labelledby="accounts-title" class="accounts-screen">
      <h2 id="accounts-title">Accounts</h2>
      <div class="error" role="alert">
        <p>
          <strong>Only administrators can see and manage accounts</strong> (the service answered
          403, Forbidden). Ask an administrator to add an account or change a role.
        </p>
        <a href={BOOKS_ADDRESS}>Back to the books</a>
      </div>
    </section>
  );
}
