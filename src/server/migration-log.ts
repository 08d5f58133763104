import type pino from "pino";
import type { MigrationLog } from "../store/applied-migrations.js";

/** Start-up's lines of its migrations: each applied, and how far a long one has come. */
export function migrationLog(log: pino.Logger): MigrationLog {
  return {
    applied: (applied) => log.info(applied, "migration applied"),
    progress: (progress) => log.info(progress, "migration progress"),
    running: (running) => log.info(running, "migration running"),
  };
}
