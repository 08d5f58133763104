// A dialog holding one form: its fields, a refusal of the service, Cancel and the one action.
import type { ComponentChildren } from "preact";
import { Modal } from "./modal.js";

interface Props {
  title: string;
  /** The action's button, and its words while the service answers. */
  action: [label: string, busyLabel: string];
  /** The call's state (use-sending.ts): busy while the service answers, and its refusal. */
  sending: { busy: boolean; refused: string | undefined };
  /** A removal: the action in the colour of danger, and the focus first on Cancel. */
  danger?: boolean;
  cancel?: string;
  onSubmit: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}

export function FormDialog(props: Props) {
  return (
    <Modal title={props.title} onCancel={props.onCancel}>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          props.onSubmit();
        }}
      >
        {props.children}
        {props.sending.refused && (
          <p class="error" role="alert">
            {props.sending.refused}
          </p>
        )}
        <div class="actions">
          <button type="button" class="quiet" onClick={props.onCancel} autofocus={props.danger}>
            {props.cancel ?? "Cancel"}
          </button>
          <button
            type="submit"
            class={props.danger ? "danger" : undefined}
            disabled={props.sending.busy}
          >
            {props.action[props.sending.busy ? 1 : 0]}
          </button>
        </div>
      </form>
    </Modal>
  );
}
