// A new password, typed twice: at least 12 characters (the service's rule), and the same both
// times. Used to change one's own, to give a new account one, and to reset one.
import {
  checkPassword,
  PASSWORD_MIN,
  type PasswordProblem,
} from "@book-catalogue/rules/account.js";
import { useState } from "preact/hooks";
import { FieldInput } from "./field-input.js";
import { refusedBecause } from "./session.js";

type Problems = { password?: string | undefined; repeated?: string | undefined };

function describe(problem: PasswordProblem): string {
  return problem.kind === "too-short"
    ? `The password needs at least ${problem.min} characters.`
    : `The password can be at most ${problem.max} characters.`;
}

const problemsOf = (password: string, repeated: string): Problems => {
  const problem = checkPassword(password);
  return {
    password: problem && describe(problem),
    repeated: repeated === password ? undefined : "The two passwords are not the same.",
  };
};

/** The pair's state: `check` before sending, `refuse` for the service's reason. */
export function usePasswordPair(id: string) {
  const [password, setPassword] = useState("");
  const [repeated, setRepeated] = useState("");
  const [problems, setProblems] = useState<Problems>({});
  /** The password to send, or undefined with its problems shown and the focus on the first. */
  const check = (): string | undefined => {
    const found = problemsOf(password, repeated);
    setProblems(found);
    if (found.password === undefined && found.repeated === undefined) return password;
    document.getElementById(found.password ? id : `${id}-again`)?.focus();
    return undefined;
  };
  const refuse = (rule: string) => {
    setProblems({ password: refusedBecause(rule) });
    document.getElementById(id)?.focus();
  };
  const fields = { id, password, repeated, problems, setPassword, setRepeated, setProblems };
  return { fields, check, refuse };
}

type Pair = ReturnType<typeof usePasswordPair>["fields"];

export function PasswordFields(props: { pair: Pair; label: string; hint?: string }) {
  const { id, password, repeated, problems, setProblems } = props.pair;
  // A problem already shown is checked again as the field changes, and goes once fixed.
  const recheck = (next: string, again: string) => {
    const found = problemsOf(next, again);
    setProblems({
      password: problems.password && found.password,
      repeated: problems.repeated && found.repeated,
    });
  };
  return (
    <>
      <FieldInput
        id={id}
        type="password"
        autocomplete="new-password"
        label={props.label}
        hint={props.hint ?? `At least ${PASSWORD_MIN} characters.`}
        value={password}
        problem={problems.password}
        onInput={(value) => {
          props.pair.setPassword(value);
          recheck(value, repeated);
        }}
      />
      <FieldInput
        id={`${id}-again`}
        type="password"
        autocomplete="new-password"
        label={`Repeat the ${props.label.toLowerCase()}`}
        value={repeated}
        problem={problems.repeated}
        onInput={(value) => {
          props.pair.setRepeated(value);
          recheck(password, value);
        }}
      />
    </>
  );
}
