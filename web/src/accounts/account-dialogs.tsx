// What an administrator does to one account, each in a dialog: add one, change its role, reset
// its password, remove it.
import { checkName } from "@book-catalogue/rules/account.js";
import type { Account, BookCatalogueClient, Role } from "book-catalogue";
import { useState } from "preact/hooks";
import { FieldInput } from "../field-input.js";
import { FormDialog } from "../form-dialog.js";
import { PasswordFields, usePasswordPair } from "../password-fields.js";
import { ROLE_NAMES } from "../roles.js";
import { refusedBecause, refusedField } from "../session.js";
import { useSending } from "../use-sending.js";
import { RoleChoice } from "./role-choice.js";

interface ActionProps {
  client: BookCatalogueClient;
  /** After the change: the account as the service answered, and what to announce. */
  onDone: (message: string, changed?: Account) => void;
  onCancel: () => void;
  /** A failure that ends the session (401); others are shown in the dialog. */
  onFailure: (error: unknown) => void;
}

/** A name's problem in words, or undefined: the service's rule for a name. */
function nameProblem(name: string): string | undefined {
  const problem = checkName(name);
  if (problem === undefined) return undefined;
  if (problem.kind === "too-long") return `A name can be at most ${problem.max} characters.`;
  if (problem.kind === "spaces-at-ends") return "A name cannot begin or end with a space.";
  if (problem.kind === "forbidden-character") {
    return "The name holds a character not allowed: a control or an invisible one.";
  }
  return "Type a name.";
}

export function AddAccountDialog({ client, onDone, onCancel, onFailure }: ActionProps) {
  const [name, setName] = useState("");
  const [problem, setProblem] = useState<string>();
  const [role, setRole] = useState<Role>("reader");
  const pair = usePasswordPair("account-password");
  const sending = useSending(onFailure);

  /** A refusal naming a field, beside it (a name taken, say); false for any other. */
  const explained = (error: unknown) => {
    const named = refusedField(error, ["name", "password"] as const);
    if (named?.field === "password") pair.refuse(named.rule);
    else if (named?.field === "name") {
      setProblem(refusedBecause(named.rule));
      document.getElementById("account-name")?.focus();
    }
    return named !== undefined;
  };
  const submit = () => {
    const found = nameProblem(name);
    setProblem(found);
    if (found) return document.getElementById("account-name")?.focus();
    const password = pair.check();
    if (password === undefined) return;
    void sending.send(async () => {
      const added = await client.createAccount({ name, role, password });
      onDone(`Added ${added.name}, ${ROLE_NAMES[added.role]}.`);
    }, explained);
  };

  return (
    <FormDialog
      title="Add an account"
      action={["Add account", "Adding…"]}
      sending={sending}
      onSubmit={submit}
      onCancel={onCancel}
    >
      <FieldInput
        id="account-name"
        label="Name"
        hint="What they type to sign in."
        autocomplete="off"
        value={name}
        problem={problem}
        onInput={(value) => {
          setName(value);
          if (problem) setProblem(nameProblem(value));
        }}
      />
      <RoleChoice value={role} onChange={setRole} />
      <PasswordFields pair={pair.fields} label="Password" />
    </FormDialog>
  );
}

export function RoleDialog(props: ActionProps & { account: Account }) {
  const { client, account, onDone, onCancel, onFailure } = props;
  const [role, setRole] = useState(account.role);
  const sending = useSending(onFailure);
  const submit = () =>
    void sending.send(async () => {
      const changed = await client.updateAccount(account.id, { role });
      onDone(`The role of ${changed.name} is now ${ROLE_NAMES[changed.role]}.`, changed);
    });
  return (
    <FormDialog
      title={`Change the role of ${account.name}`}
      action={["Change role", "Changing…"]}
      sending={sending}
      onSubmit={submit}
      onCancel={onCancel}
    >
      <p class="dialog-text">It holds from their next request; they stay signed in.</p>
      <RoleChoice value={role} onChange={setRole} />
    </FormDialog>
  );
}

export function ResetPasswordDialog(props: ActionProps & { account: Account }) {
  const { client, account, onDone, onCancel, onFailure } = props;
  const pair = usePasswordPair("reset-password");
  const sending = useSending(onFailure);
  const submit = () => {
    const password = pair.check();
    if (password === undefined) return;
    void sending.send(
      async () => {
        const changed = await client.updateAccount(account.id, { password });
        onDone(`Reset the password of ${changed.name}.`, changed);
      },
      (error) => {
        const named = refusedField(error, ["password"] as const);
        if (named) pair.refuse(named.rule);
        return named !== undefined;
      },
    );
  };
  return (
    <FormDialog
      title={`Reset the password of ${account.name}`}
      action={["Reset password", "Resetting…"]}
      sending={sending}
      onSubmit={submit}
      onCancel={onCancel}
    >
      <p class="dialog-text">
        They are signed out everywhere at once. Tell them the new password; they can change it once
        signed in.
      </p>
      <PasswordFields pair={pair.fields} label="New password" />
    </FormDialog>
  );
}

export function RemoveAccountDialog(props: ActionProps & { account: Account }) {
  const { client, account, onDone, onCancel, onFailure } = props;
  const sending = useSending(onFailure);
  const submit = () =>
    void sending.send(async () => {
      await client.deleteAccount(account.id);
      onDone(`Removed ${account.name}.`);
    });
  return (
    <FormDialog
      title={`Remove ${account.name}?`}
      action={["Remove", "Removing…"]}
      cancel="Keep it"
      danger
      sending={sending}
      onSubmit={submit}
      onCancel={onCancel}
    >
      <p class="dialog-text">
        {account.name} can no longer sign in, and is signed out everywhere at once. This cannot be
        undone; to stop them for a while, disable the account instead.
      </p>
    </FormDialog>
  );
}
