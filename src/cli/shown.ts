// What the command prints about text from elsewhere (a file and its name, the service's
// answers, a backup's header) never plays on the terminal: no escape sequence runs (ESC, or
// the 8-bit CSI U+009B), no line is turned around (a right-to-left override), nothing hides.
const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;
const writtenOut = (c: string) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`;

/** Text quoted for the terminal: JSON's quoting, and every unseen character written as \u{…}. */
export const shown = (text: string) => JSON.stringify(text).replace(UNSEEN, writtenOut);

/** A line the command prints: every unseen character in it written as \u{…}, the rest as is. */
export const printable = (line: string) => line.replace(UNSEEN, writtenOut);

/** Writes a line the command prints, as printable makes it, to standard output or `to`. */
export function printLine(line: string, to: NodeJS.WriteStream = process.stdout): void {
  to.write(`${printable(line)}\n`);
}
