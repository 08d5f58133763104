// The accounts, one row each (on a phone, a card each): name, role, enabled, and what an
// administrator can do to each. The signed-in account's own row offers nothing: its password is
// changed from the header, and removing or disabling it would lock its administrator out.
import type { Account } from "book-catalogue";
import { ROLE_NAMES } from "../roles.js";

export type AccountAction = "role" | "reset" | "enable" | "disable" | "remove";

interface Props {
  accounts: Account[];
  /** The signed-in account's id (null for the built-in pair, which is not listed). */
  me: number | null;
  onAction: (action: AccountAction, account: Account) => void;
}

export function AccountTable({ accounts, me, onAction }: Props) {
  return (
    <table class="accounts">
      <thead>
        <tr>
          <th scope="col" class="col-name">
            Name
          </th>
          <th scope="col" class="col-role">
            Role
          </th>
          <th scope="col" class="col-state">
            Status
          </th>
          <th scope="col" class="col-manage">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {accounts.map((account) => (
          <AccountRow
            key={account.id}
            account={account}
            own={account.id === me}
            onAction={onAction}
          />
        ))}
      </tbody>
    </table>
  );
}

function AccountRow(props: { account: Account; own: boolean; onAction: Props["onAction"] }) {
  const { account, own, onAction } = props;
  return (
    <tr data-account={account.id} class={account.enabled ? undefined : "disabled"}>
      <td class="col-name" title={account.name}>
        {account.name}
        {own && <span class="you"> (you)</span>}
      </td>
      <td data-label="Role" class="col-role">
        {ROLE_NAMES[account.role]}
      </td>
      <td data-label="Status" class="col-state">
        {account.enabled ? "Enabled" : "Disabled"}
      </td>
      <td class="col-manage">{!own && <Actions account={account} onAction={onAction} />}</td>
    </tr>
  );
}

const ACTIONS: { action: AccountAction; label: string; danger?: boolean }[] = [
  { action: "role", label: "Change role" },
  { action: "reset", label: "Reset password" },
  { action: "disable", label: "Disable" },
  { action: "enable", label: "Enable" },
  { action: "remove", label: "Remove", danger: true },
];

function Actions({ account, onAction }: { account: Account; onAction: Props["onAction"] }) {
  const shown = ACTIONS.filter(({ action }) =>
    action === "enable" ? !account.enabled : action === "disable" ? account.enabled : true,
  );
  return (
    <div class="manage">
      {shown.map(({ action, label, danger }) => (
        <button
          key={action}
          type="button"
          class={danger ? "quiet danger" : "quiet"}
          aria-label={`${label}: ${account.name}`}
          onClick={() => onAction(action, account)}
        >
          {label}
        </button>
      ))}
    </div>
  );
}
