// The server program (npm start, book-catalogue serve): reads the configuration once, then
// serves from this process, or, with WORKERS above 1, runs the primary of the workers.
import cluster from "node:cluster";
import { type Config, loadConfig, loadEnvFile } from "../config.js";
import { keepFilesPrivate } from "../private-files.js";
import { fail } from "./fail.js";
import { runPrimary } from "./primary.js";

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
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config);
  // Loaded here, so a primary does not hold the server's modules it never runs.
  const { serve } = await import("./serve.js");
  await serve(config);
}

await main();
