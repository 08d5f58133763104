// Which catalogue backup and restore talk to, as pg_dump does: --db, else the DB_URL of the
// environment or of .env (the service's own), else the service's default.
import { type DbTarget, DEFAULT_DB_URL, loadEnvFile, parseDbUrl } from "../config.js";
import { UsageError } from "./errors.js";

export const databaseOptions = { db: { type: "string" } } as const;

export function databaseTarget(values: { db?: string | undefined }): DbTarget {
  loadEnvFile();
  const url = values.db ?? (process.env.DB_URL || DEFAULT_DB_URL);
  const problems: string[] = [];
  const target = parseDbUrl(url, problems);
  if (problems.length > 0) throw new UsageError(problems.join("; "));
  return target;
}
