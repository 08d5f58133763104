import { CatalogueError } from "../client/client.js";

/** The command line is wrong: exit 2. */
export class UsageError extends Error {}
/** The file cannot be imported at all: exit 2. */
export class FileError extends Error {}
/** What was typed or piped cannot be used (a password too short): nothing was sent, exit 2. */
export class InputError extends Error {}

/** The one line a failure prints, and the exit code: 2 when nothing could be tried, else 1. */
export function describeFailure(error: unknown): { message: string; exitCode: number } {
  const message =
    error instanceof UsageError
      ? `${error.message} (book-catalogue --help)`
      : error instanceof CatalogueError
        ? error.status === 0
          ? `${error.message} (is it running? --url)`
          : `the service answered ${error.status}: ${refusalText(error)}`
        : (error as Error).message;
  const unusable =
    error instanceof UsageError ||
    error instanceof FileError ||
    error instanceof InputError ||
    String((error as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS");
  return { message, exitCode: unusable ? 2 : 1 };
}

/** A refusal of the service as a person reads it: its message, then its reason when it gave one. */
export function refusalText(error: CatalogueError): string {
  return error.reason ? `${error.message} (${error.reason})` : error.message;
}

/** A file-system error met while writing `file`, as "cannot write FILE: …"; others as they are. */
export function writeFailure(file: string, error: unknown): unknown {
  return (error as { syscall?: unknown }).syscall === undefined
    ? error
    : new Error(`cannot write ${file}: ${(error as Error).message}`);
}
