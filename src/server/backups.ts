// Scheduled backups (BACKUP_DIR) for the process that runs them: the only one, or the primary.
import type { Registry } from "prom-client";
import { type ScheduledBackups, scheduleBackups } from "../backup/schedule.js";
import type { Config } from "../config.js";

type Log = Parameters<typeof scheduleBackups>[2];

/**
 * Starts the schedule when BACKUP_DIR is set; its metrics go to `registry` when given, with
 * the newest backup already in the folder counted before this resolves.
 */
export async function startBackups(
  config: Pick<Config, "backups" | "db">,
  log: Log,
  registry?: Registry,
): Promise<ScheduledBackups | undefined> {
  if (config.backups === undefined) return undefined;
  const metrics =
    registry === undefined
      ? undefined
      : (await import("../backup/metrics.js")).createBackupMetrics(registry);
  const { dir, intervalSeconds, keep } = config.backups;
  log.info({ dir, intervalSeconds, keep }, "scheduled backups");
  return scheduleBackups(config.backups, config.db, log, metrics);
}
