// One labelled field of a form, with its hint and the problem found in it (each read out with
// the field): the book dialog's and the account dialogs' fields alike.

interface Props {
  id: string;
  label: string;
  hint?: string | undefined;
  value: string;
  problem: string | undefined;
  name?: string | undefined;
  type?: "text" | "password" | undefined;
  autocomplete?: string | undefined;
  inputMode?: "numeric" | undefined;
  onInput: (value: string) => void;
  onBlur?: (value: string) => void;
}

export function FieldInput(props: Props) {
  const { id, hint, problem } = props;
  const described = [hint && `${id}-hint`, problem && `${id}-problem`].filter(Boolean).join(" ");
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type}
        // Typed right to left (Hebrew, Arabic), a title reads so, its brackets in order.
        dir="auto"
        value={props.value}
        autocomplete={props.autocomplete}
        inputMode={props.inputMode}
        aria-invalid={problem !== undefined}
        aria-describedby={described || undefined}
        onInput={(event) => props.onInput(event.currentTarget.value)}
        onBlur={(event) => props.onBlur?.(event.currentTarget.value)}
      />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {problem && (
        <p class="problem" id={`${id}-problem`}>
          {problem}
        </p>
      )}
    </div>
  );
}
