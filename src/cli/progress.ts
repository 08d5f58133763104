/**
 * A progress bar on a terminal (standard error), followed by `status`; elsewhere, a plain
 * line every `lineEvery` items when given, else nothing.
 */
export function progressBar(lineEvery?: number) {
  const tty = process.stderr.isTTY;
  const width = 30;
  let last = 0;
  let lastBar = "";
  return (done: number, total: number, status = "") => {
    if (tty) {
      const filled = Math.round((Math.min(done, total) / Math.max(total, 1)) * width);
      const bar = `\r[${"#".repeat(filled)}${" ".repeat(width - filled)}] ${done}/${total} ${status}`;
      // A redraw only when it changes: a million books are not a million writes.
      if (bar !== lastBar) process.stderr.write(bar);
      lastBar = bar;
      if (done === total) process.stderr.write("\n");
    } else if (lineEvery !== undefined && (done - last >= lineEvery || done === total)) {
      last = done;
      process.stderr.write(`progress: ${done}/${total} ${status}\n`);
    }
  };
}

/** "1 book", "2 books": a count and its noun. */
export const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`;
