/**
 * Text from a file or the service quoted for the terminal: JSON's quoting (C0 controls
 * escaped), and what else is invisible or moves the text (C1 controls, bidirectional
 * overrides, zero-width characters) written as \u{…}, so that no escape sequence runs and no
 * line is turned around.
 */
export const shown = (text: string) =>
  JSON.stringify(text).replace(
    /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu,
    (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`,
  );
