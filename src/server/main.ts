// The server program (npm start, book-catalogue serve): reads the configuration once, then
// serves from this process, or, with WORKERS above 1, runs the primary of the workers.
import "../node-version.js";
import cluster from "node:cluster";
import { type Config, loadConfig, loadEnvFile } from "../config.js";
import { keepFilesPrivate } from "../private-files.js";
import { fail } from "./fail.js";

async function main(): Promise<void> {
  // First, before anything (the store, SQLite's -wal and -shm, a backup) creates a file.
  keepFilesPrivate();
  let config: Config;
  try {
    loadEnvFile();
    config = loadConfig();
  } catch (error) {
    fail((error as Error).message);
  }
  // Both loaded here: no module that loads node:sqlite is imported before the Node version
  // is checked (node-version.ts), and a primary does not hold the server's modules.
  if (config.workers > 1 && cluster.isPrimary) {
    return (await import("./primary.js")).runPrimary(config);
  }
  const { serve } = await import("./serve.js");
  await serve(config);
}

await main();
