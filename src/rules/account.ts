// What an account's name and password may be, for the server and the page alike. Free of Node.
// The server's JSON schemas (accounts/schemas.ts) are built from the same limits.

export const NAME_MAX = 100;
/**
 * A name is typed at every login and shown in every entry of the change log: no space at
 * either end (" ana" and "ana" would look one), and no control or invisible character (a
 * zero-width space, a right-to-left override, a variation selector, a Hangul filler: Unicode's
 * default-ignorable code points, and the blank braille pattern) that would make two names look
 * alike or a list read wrongly. Compiled with the `u` flag, as Ajv does.
 */
export const NAME_PATTERN =
  "^(?!\\s)(?!.*\\s$)[^\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Default_Ignorable_Code_Point}\\u2800\\uD800-\\uDFFF]+$";
const NAME = new RegExp(NAME_PATTERN, "u");
/** OWASP's least for a password that is the only factor; the most bounds the hash's input. */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 1024;
/**
 * A new password is well-formed text: an unpaired surrogate would be hashed as U+FFFD (its
 * UTF-8), so different passwords would be one. Compiled with the `u` flag, as Ajv does.
 */
export const PASSWORD_PATTERN = "^[^\\uD800-\\uDFFF]*$";

export type NameProblem =
  | { kind: "empty" }
  | { kind: "too-long"; max: number }
  | { kind: "spaces-at-ends" }
  | { kind: "forbidden-character" };

/** A new account name's problem, or undefined; its length counts code points, as Ajv does. */
export function checkName(value: string): NameProblem | undefined {
  if (value.trim() === "") return { kind: "empty" };
  if ([...value].length > NAME_MAX) return { kind: "too-long", max: NAME_MAX };
  if (NAME.test(value)) return undefined;
  return value.trim() === value ? { kind: "forbidden-character" } : { kind: "spaces-at-ends" };
}

export type PasswordProblem =
  | { kind: "too-short"; min: number }
  | { kind: "too-long"; max: number };

/** A new password's problem, or undefined; its length counts code points, as Ajv does. */
export function checkPassword(value: string): PasswordProblem | undefined {
  const length = [...value].length;
  if (length < PASSWORD_MIN) return { kind: "too-short", min: PASSWORD_MIN };
  if (length > PASSWORD_MAX) return { kind: "too-long", max: PASSWORD_MAX };
  return undefined;
}
