// Where the process's log lines go: standard output, written in the background so that no
// request waits on it. pino's own destination (sonic-boom) retries a failed write for ever at
// exit, 100 ms at a time, and rethrows other write errors as uncaught ones; a log that cannot
// be written (a full disk, a closed or stalled pipe) must instead cost lines, never a request
// or a shutdown. So: a bounded buffer, one write in flight, lines dropped and counted.
import { write, writeSync } from "node:fs";
import { hostname } from "node:os";

/** What waits to be written, at most; past it, new lines are dropped. */
const MAX_PENDING_BYTES = 8 * 1024 * 1024;
/** A destination that answers "try again" (EAGAIN) is tried again after this. */
const RETRY_MS = 100;
const LINE_FEED = 10;

export interface LogDestination {
  /** Takes whole lines; never blocks, never throws. */
  write(lines: string): boolean;
  /** Resolves once what was written before is out, or dropped, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>;
}

let droppedLines = 0;

/** Log lines this process could not write (a metric). */
export const droppedLogLines = (): number => droppedLines;

function countLines(bytes: Buffer): number {
  let lines = 0;
  for (let at = bytes.indexOf(LINE_FEED); at !== -1; at = bytes.indexOf(LINE_FEED, at + 1)) {
    lines++;
  }
  return lines;
}

/** The line that tells, once writing works again, how many lines were lost. */
function droppedLine(count: number): string {
  const line = { level: 40, time: Date.now(), pid: process.pid, hostname: hostname() };
  const msg = "log lines dropped: the log's destination could not take them";
  return `${JSON.stringify({ ...line, dropped: count, msg })}\n`;
}

/** A log destination writing to the file descriptor `fd` (standard output by default). */
export function openLogDestination(fd = 1, maxPendingBytes = MAX_PENDING_BYTES): LogDestination {
  let pending: string[] = [];
  let pendingBytes = 0;
  let inFlight: Buffer | undefined;
  let unreported = 0;
  let drained: (() => void)[] = [];

  const drop = (lines: number) => {
    droppedLines += lines;
    unreported += lines;
  };
  const next = () => {
    inFlight = undefined;
    if (pending.length === 0) {
      for (const resolve of drained) resolve();
      drained = [];
      return;
    }
    send(Buffer.from(pending.join("")));
    pending = [];
    pendingBytes = 0;
  };
  const send = (bytes: Buffer) => {
    inFlight = bytes;
    write(fd, bytes, 0, bytes.length, null, (error, written) => {
      if (error && (error as NodeJS.ErrnoException).code === "EAGAIN") {
        setTimeout(() => send(bytes), RETRY_MS).unref();
        return;
      }
      if (error) drop(countLines(bytes));
      else if (written < bytes.length) return send(bytes.subarray(written));
      else if (unreported > 0) {
        pending.unshift(droppedLine(unreported));
        unreported = 0;
      }
      next();
    });
  };
  const flushAtExit = () => {
    // Only when nothing is in flight (a write in flight may be stuck on a stalled reader,
    // and another would wait behind it), and only one attempt.
    if (inFlight !== undefined || pending.length === 0) return;
    const lines = pending.join("");
    try {
      writeSync(fd, lines);
    } catch {
      drop(countLines(Buffer.from(lines)));
    }
    pending = [];
  };
  process.once("exit", flushAtExit);

  return {
    write(lines) {
      if (pendingBytes + lines.length > maxPendingBytes) {
        drop(countLines(Buffer.from(lines)));
        return false;
      }
      pending.push(lines);
      pendingBytes += lines.length;
      if (inFlight === undefined) next();
      return true;
    },
    drain(timeoutMs) {
      if (inFlight === undefined && pending.length === 0) return Promise.resolve();
      return new Promise((resolve) => {
        drained.push(resolve);
        setTimeout(resolve, timeoutMs).unref();
      });
    },
  };
}

let standardOutput: LogDestination | undefined;

/** The process's one destination on standard output. */
export function standardOutputLog(): LogDestination {
  standardOutput ??= openLogDestination();
  return standardOutput;
}
