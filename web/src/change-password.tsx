// "Change my password", for every account but the built-in pair (whose password is set where
// the service runs): the current password, and the new one twice.
import { PASSWORD_MIN } from "@book-catalogue/rules/account.js";
import { type BookCatalogueClient, CatalogueError } from "book-catalogue";
import { useState } from "preact/hooks";
import { FieldInput } from "./field-input.js";
import { FormDialog } from "./form-dialog.js";
import { PasswordFields, usePasswordPair } from "./password-fields.js";
import { refusedBecause, refusedField } from "./session.js";
import { useSending } from "./use-sending.js";

interface Props {
  client: BookCatalogueClient;
  /** After the change, with the new password: every token of the account has ended. */
  onChanged: (password: string) => Promise<void>;
  onCancel: () => void;
  /** A failure that ends the session (401); others are shown in the dialog. */
  onFailure: (error: unknown) => void;
}

const BUILT_IN_PASSWORD =
  "The built-in account's password is set where the service runs (AUTH_PASSWORD): it cannot be changed here.";

/** A refusal shown beside its field, or the built-in pair's 403 in words; false for others. */
function explain(
  error: unknown,
  refusePassword: (rule: string) => void,
  refuseCurrent: (problem: string) => void,
): boolean {
  const named = refusedField(error, ["current", "password"] as const);
  if (named?.field === "password") refusePassword(named.rule);
  else if (named?.field === "current") {
    refuseCurrent(refusedBecause(named.rule));
    document.getElementById("current-password")?.focus();
  } else if (error instanceof CatalogueError && error.status === 403) {
    refuseCurrent(BUILT_IN_PASSWORD);
  } else return false;
  return true;
}

export function ChangePasswordDialog({ client, onChanged, onCancel, onFailure }: Props) {
  const [current, setCurrent] = useState("");
  const [currentProblem, setCurrentProblem] = useState<string>();
  const pair = usePasswordPair("new-password");
  const sending = useSending(onFailure);

  const submit = () => {
    const missing = current === "" ? "Type your current password." : undefined;
    setCurrentProblem(missing);
    if (missing) {
      document.getElementById("current-password")?.focus();
      return;
    }
    const password = pair.check();
    if (password === undefined) return;
    void sending.send(
      async () => {
        await client.changeOwnPassword(current, password);
        await onChanged(password);
      },
      (error) => explain(error, pair.refuse, setCurrentProblem),
    );
  };

  return (
    <FormDialog
      title="Change my password"
      action={["Change password", "Changing…"]}
      sending={sending}
      onSubmit={submit}
      onCancel={onCancel}
    >
      <FieldInput
        id="current-password"
        type="password"
        autocomplete="current-password"
        label="Current password"
        value={current}
        problem={currentProblem}
        onInput={(value) => {
          setCurrent(value);
          if (value !== "" && currentProblem) setCurrentProblem(undefined);
        }}
      />
      <PasswordFields
        pair={pair.fields}
        label="New password"
        hint={`At least ${PASSWORD_MIN} characters. Your other sessions end, on every device.`}
      />
    </FormDialog>
  );
}
