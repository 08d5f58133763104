import { rmSync } from "node:fs";

/**
 * Until the returned function is called, Ctrl-C (SIGINT) or SIGTERM removes `path`, a file
 * still being written, and ends the command as the signal would (exit 130 or 143).
 */
export function removeOnInterrupt(path: string): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    rmSync(path, { force: true });
    process.exit(128 + (signal === "SIGINT" ? 2 : 15));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
}

/**
 * Until the returned `release` is called, Ctrl-C (SIGINT) asks the command to stop after the
 * step under way instead of ending it, and `requested` tells whether it has been asked. A
 * second Ctrl-C ends the command at once, as Node would.
 */
export function stopOnInterrupt(): { requested(): boolean; release(): void } {
  let requested = false;
  const onSignal = () => {
    requested = true;
  };
  process.once("SIGINT", onSignal);
  return {
    requested: () => requested,
    release: () => process.off("SIGINT", onSignal),
  };
}

/**
 * Until `release` is called, Ctrl-C (SIGINT) or SIGTERM aborts `signal`, for a command that
 * waits without end (changes --follow) to stop what it waits on and end cleanly.
 */
export function abortOnInterrupt(): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    release: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
