// Scheduled snapshots (BACKUP_DIR): one backup an interval after the newest in the folder, so
// restarts neither skip nor crowd them, and the newest's time is the metric's from start-up
// on; the newest BACKUP_KEEP kept. Each is complete or absent (write.ts); its outcome is
// logged and counted, and a failure harms nothing else.
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { BackupSchedule, DbTarget } from "../config.js";
import { privateFolder } from "../private-files.js";
import { openBackupStore } from "../store/open.js";
import type { BackupMetrics } from "./metrics.js";
import { writeBackup } from "./write.js";

/** A scheduled backup's name: its time, so that names sort as times do. */
const NAME = /^books-(\d{8}T\d{6}Z)\.backup$/;
/** The temporary file of a scheduled backup (write.ts's partialName; pids in older releases). */
const LEFT_BEHIND = /^\.books-\d{8}T\d{6}Z\.backup\.[0-9a-f]+\.partial$/;
const nameAt = (at: Date) =>
  `books-${at.toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "")}.backup`;
const timeOf = (stamp: string) =>
  Date.parse(stamp.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z"));

interface Log {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface ScheduledBackups {
  /** No backup starts after this; one under way finishes or is abandoned with the process. */
  stop(): void;
}

/**
 * Starts the schedule once the folder is read: the newest backup in it, if any, has set the
 * metrics' time of the last success, and the next is due an interval after it.
 */
export async function scheduleBackups(
  schedule: BackupSchedule,
  db: DbTarget,
  log: Log,
  metrics?: BackupMetrics,
): Promise<ScheduledBackups> {
  const intervalMs = schedule.intervalSeconds * 1000;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const next = (delayMs: number) => {
    if (stopped) return;
    // Unref'd: a pending backup never keeps a stopping process alive.
    timer = setTimeout(run, delayMs).unref();
  };
  const run = async () => {
    await takeBackup(schedule, db, log, metrics);
    next(intervalMs);
  };
  // A folder that cannot be read is the first backup's to report.
  const newest = await newestBackup(schedule.dir).catch(() => undefined);
  if (newest !== undefined) metrics?.found(new Date(newest));
  next(newest === undefined ? 0 : Math.max(0, newest + intervalMs - Date.now()));
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * When the newest scheduled backup in the folder was taken, by its name (the time its
 * snapshot began, as `succeeded` has it); undefined when there is none. Only the names the
 * schedule gives a complete backup count: a temporary file is named otherwise until renamed.
 */
async function newestBackup(dir: string): Promise<number | undefined> {
  const names = await readdir(dir);
  await removeLeftBehind(dir, names);
  const stamps = names.map((name) => NAME.exec(name)?.[1]).filter(Boolean);
  const newest = (stamps as string[]).sort().at(-1);
  return newest === undefined ? undefined : timeOf(newest);
}

async function takeBackup(
  schedule: BackupSchedule,
  db: DbTarget,
  log: Log,
  metrics?: BackupMetrics,
): Promise<void> {
  const started = new Date();
  const file = join(schedule.dir, nameAt(started));
  try {
    // Checked again at each backup: the folder may have been made, or changed, since start-up.
    privateFolder(schedule.dir, "BACKUP_DIR");
    const store = await openBackupStore(db, "read");
    try {
      const header = await writeBackup(store, file);
      const seconds = (Date.now() - started.getTime()) / 1000;
      metrics?.succeeded(started, seconds, header.books);
      log.info({ file, books: header.books, seconds }, "backup written");
    } finally {
      await store.close();
    }
  } catch (error) {
    metrics?.failed();
    log.error({ dir: schedule.dir, reason: (error as Error).message }, "backup failed");
    return;
  }
  await removeOldBackups(schedule, log);
}

/**
 * Removes the temporary files of scheduled backups an earlier process (killed, say) left;
 * called before this process's first backup, so none is its own.
 */
async function removeLeftBehind(dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    if (LEFT_BEHIND.test(name)) await rm(join(dir, name), { force: true });
  }
}

/** Keeps the newest `keep` scheduled backups; other files in the folder are left alone. */
async function removeOldBackups(schedule: BackupSchedule, log: Log): Promise<void> {
  try {
    const names = (await readdir(schedule.dir)).filter((name) => NAME.test(name)).sort();
    for (const name of names.slice(0, Math.max(0, names.length - schedule.keep))) {
      await rm(join(schedule.dir, name), { force: true });
      log.info({ file: join(schedule.dir, name) }, "old backup removed");
    }
  } catch (error) {
    log.error({ dir: schedule.dir, reason: (error as Error).message }, "old backups not removed");
  }
}
