// The scheduled backups' metrics: when the last one succeeded, so an operator can alert on a
// schedule that stopped, and how each ended.
import { Counter, Gauge, type Registry } from "prom-client";

export interface BackupMetrics {
  succeeded(at: Date, seconds: number, books: number): void;
  failed(): void;
  /** At start-up: the time of the newest scheduled backup an earlier process wrote. */
  found(at: Date): void;
}

export function createBackupMetrics(registry: Registry): BackupMetrics {
  const registers = [registry];
  const lastSuccess = new Gauge({
    name: "book_catalogue_backup_last_success_timestamp_seconds",
    help: "When the newest scheduled backup was taken (Unix time), by this process or found in BACKUP_DIR at start-up; 0 when there is none",
    registers,
  });
  const lastSeconds = new Gauge({
    name: "book_catalogue_backup_last_duration_seconds",
    help: "How long the last scheduled backup that succeeded took",
    registers,
  });
  const lastBooks = new Gauge({
    name: "book_catalogue_backup_last_books",
    help: "How many books the last scheduled backup that succeeded holds",
    registers,
  });
  const outcomes = new Counter({
    name: "book_catalogue_backups_total",
    help: "Scheduled backups, by outcome: success or failure",
    labelNames: ["outcome"] as const,
    registers,
  });
  outcomes.inc({ outcome: "success" }, 0);
  outcomes.inc({ outcome: "failure" }, 0);
  return {
    succeeded(at, seconds, books) {
      lastSuccess.set(at.getTime() / 1000);
      lastSeconds.set(seconds);
      lastBooks.set(books);
      outcomes.inc({ outcome: "success" });
    },
    failed: () => outcomes.inc({ outcome: "failure" }),
    found: (at) => lastSuccess.set(at.getTime() / 1000),
  };
}
