// Preloaded in every test process (test/support/run-suite.ts). `--test-force-exit` ends a test
// file's process as soon as its tests have finished, and on Linux the results still buffered
// in the pipe to the runner were lost with it: a loaded machine reported 595 of 609 tests,
// with 0 failures (nodejs/node#64833, open). With its standard output blocking, a test
// process has handed every result to the runner before it exits.
const stdout = process.stdout as unknown as { _handle?: { setBlocking?(blocking: boolean): void } };
stdout._handle?.setBlocking?.(true);
