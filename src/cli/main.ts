#!/usr/bin/env node
// book-catalogue: serve the catalogue, or script it through its API. Each command is a file
// of this folder.
import "../node-version.js";
import "./warnings.js";
import { parseArgs } from "node:util";
import { createClient } from "../client/client.js";
import { keepFilesPrivate } from "../private-files.js";
import { VERSION } from "../version.js";
import { accountsCommand } from "./accounts.js";
import { changesCommand } from "./changes.js";
import { connection, connectionOptions } from "./connection.js";
import { describeFailure, UsageError } from "./errors.js";
import { exportBooks } from "./export.js";
import { HELP } from "./help.js";
import { importFile } from "./import.js";
import { printLine } from "./shown.js";

async function main(argv: string[]) {
  // First, before any command creates a file (a backup, an export, a restored database).
  keepFilesPrivate();
  const [command, ...args] = argv;
  if (command === undefined) {
    process.stderr.write(`${HELP.main}\n`);
    process.exitCode = 2;
    return;
  }
  if (command === "--version" || command === "-v") {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  if (command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(`${HELP.main}\n`);
    return;
  }
  if (!(command in HELP) || command === "main")
    throw new UsageError(`unknown command "${command}"`);
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${HELP[command as keyof typeof HELP]}\n`);
    return;
  }
  switch (command) {
    case "serve":
      if (args.length > 0) throw new UsageError("serve takes no arguments");
      await import("../server/main.js");
      return;
    case "token": {
      const { values } = parseArgs({ args, options: connectionOptions });
      process.stdout.write(`${await createClient(connection(values)).token()}\n`);
      return;
    }
    case "import":
      return importFile(args);
    case "export":
      return exportBooks(args);
    // Loaded when run: no module that loads node:sqlite is imported before the Node version is
    // checked (node-version.ts).
    case "backup":
      return (await import("./backup.js")).backupCommand(args);
    case "restore":
      return (await import("./restore.js")).restoreCommand(args);
    case "accounts":
      return accountsCommand(args);
    case "changes":
      return changesCommand(args);
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  const { message, exitCode } = describeFailure(error);
  printLine(`book-catalogue: ${message}`, process.stderr);
  process.exit(exitCode);
}
