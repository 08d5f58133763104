/** Start-up failures are one plain line on standard error and exit code 1. */
export function fail(message: string): never {
  process.stderr.write(`book-catalogue: start-up failed: ${message}\n`);
  process.exit(1);
}
