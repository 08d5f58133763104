// Imported first by main.ts, before any module loads node:sqlite: on Node 22 that load prints
// "ExperimentalWarning: SQLite is an experimental feature" on every run of a command, noise
// in each backup's output and in scripts that read standard error. That warning alone is
// dropped; every other warning is printed as Node prints them.
const printWarnings = process.listeners("warning");
process.removeAllListeners("warning");
process.on("warning", (warning) => {
  if (warning.name === "ExperimentalWarning" && warning.message.startsWith("SQLite")) return;
  for (const print of printWarnings) print(warning);
});
