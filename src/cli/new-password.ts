// A new password for an account, never from the command line, where any user of the machine
// reads it in `ps`: typed at a prompt that does not echo it, or the first line of a pipe.
import { InputError } from "./errors.js";
import { printable } from "./shown.js";

/** The longest first line read from a pipe: more than the longest password, in UTF-8. */
const MAX_PIPED_BYTES = 8 * 1024;

/**
 * On a terminal, asks twice without echo (`prompt`, then to confirm); else reads the first line
 * of standard input. Checks the length the service requires before anything is sent.
 */
export async function readNewPassword(prompt: string, min: number, max: number) {
  const password = process.stdin.isTTY
    ? await typedTwice(prompt)
    : firstLine(await readPipe(), "standard input");
  // Characters as the service counts them: code points, not UTF-16 units.
  const length = [...password].length;
  if (length < min) throw new InputError(`the password has ${length} characters: at least ${min}`);
  if (length > max) throw new InputError(`the password is longer than ${max} characters`);
  return password;
}

async function typedTwice(prompt: string): Promise<string> {
  const terminal = unseenLines();
  try {
    const password = await terminal.line(prompt);
    if ((await terminal.line("Again: ")) !== password) {
      throw new InputError("the two passwords typed differ: nothing was changed");
    }
    return password;
  } finally {
    terminal.close();
  }
}

function firstLine(text: string, from: string): string {
  if (text === "") {
    throw new InputError(`no password on ${from} (pipe one line, or run on a terminal)`);
  }
  return text.split("\n", 1)[0]?.replace(/\r$/, "") ?? "";
}

/** Standard input up to its first newline or its end, at most MAX_PIPED_BYTES. */
async function readPipe(): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    bytes += (chunk as Buffer).length;
    if ((chunk as Buffer).includes(0x0a) || bytes > MAX_PIPED_BYTES) break;
  }
  process.stdin.destroy();
  return Buffer.concat(chunks).subarray(0, MAX_PIPED_BYTES).toString("utf8");
}

/**
 * Lines typed on the terminal with echo off (raw mode, kept on from the first prompt to the
 * last, so nothing typed ahead is echoed): Backspace erases, Enter ends a line, Ctrl-U clears
 * it, Ctrl-C ends the command (exit 130) and Ctrl-D gives up. Prompts go to standard error.
 */
function unseenLines() {
  const input = process.stdin;
  input.setRawMode(true);
  input.setEncoding("utf8");
  let pending = "";
  let waiting: (() => void) | undefined;
  const onData = (text: string) => {
    pending += text;
    waiting?.();
  };
  input.on("data", onData);
  const close = () => {
    input.off("data", onData);
    input.setRawMode(false);
    input.pause();
  };
  async function line(prompt: string): Promise<string> {
    process.stderr.write(printable(prompt));
    let typed = "";
    for (;;) {
      if (pending === "") await new Promise<void>((resolve) => (waiting = resolve));
      const chars = [...pending];
      pending = "";
      for (const [i, char] of chars.entries()) {
        if (char === "\r" || char === "\n") {
          pending = chars.slice(i + 1).join("");
          process.stderr.write("\n");
          return typed;
        }
        if (char === "\u0003") {
          close();
          process.stderr.write("\n");
          process.exit(130);
        }
        if (char === "\u0004") {
          process.stderr.write("\n");
          throw new InputError("no password typed: nothing was changed");
        }
        typed = edited(typed, char);
      }
    }
  }
  input.resume();
  return { line, close };
}

/** The line typed so far, after one more key. */
function edited(typed: string, char: string): string {
  if (char === "\u007f" || char === "\b") return [...typed].slice(0, -1).join("");
  if (char === "\u0015") return "";
  return char >= " " ? typed + char : typed;
}
