// The line start-up logs for each migration it applies: the version, and what the step did
// to the schema, read from its own SQL (CREATE, ALTER and DROP, with what they name) and from
// what it derives. A schema already current logs nothing.
import type { Migration } from "./migrations.js";

export interface AppliedMigration {
  version: number;
  does: string;
}

/** How far a step that writes every book has come. */
export interface MigrationProgress {
  version: number;
  /** Books written, of how many; those a start before this one wrote are counted in. */
  done: number;
  of: number;
  /** At the pace of this start so far; null at its first batch. */
  secondsLeft: number | null;
}

/** What start-up is told of its migrations. */
export interface MigrationLog {
  /** Each migration applied, once committed. */
  applied(applied: AppliedMigration): void;
  /** A step writing every book: at its first batch, then at most PROGRESS_INTERVAL_MS apart. */
  progress(progress: MigrationProgress): void;
  /** No line for PROGRESS_INTERVAL_MS and no batch yet written: still migrating, `seconds` in. */
  running(running: { seconds: number }): void;
}

/**
 * The books a transaction of a step that writes every book writes: no lock is held for long,
 * and a start after a crash carries on after the last batch committed.
 */
export const MIGRATION_BATCH = 10_000;

/**
 * A turn of migrating, a transaction: the steps it applied, and unless it has left the schema
 * current, the step `version` that writes every book, written through the book `through`.
 */
export interface MigrationTurn {
  applied: AppliedMigration[];
  deriving?: { version: number; through: number };
}

/** A step that writes every book: of `of` books, `done` before this start, `written` since. */
interface DerivingStep {
  version: number;
  of: number;
  done: number;
  written: number;
}

/**
 * Takes `next` turns until the schema is current or `going()` is false, telling `log` each
 * step applied and a long one's progress (`count`: the books, and those through an id). No
 * turn holds the event loop (PostgreSQL's are queries; SQLite's run in a thread): the port's
 * start-up answers go on, and the lines go out.
 */
export async function takeTurns(
  next: () => Promise<MigrationTurn>,
  count: (through: number) => Promise<{ of: number; done: number }>,
  log: MigrationLog | undefined,
  going: () => boolean = () => true,
  intervalMs = PROGRESS_INTERVAL_MS,
): Promise<void> {
  const teller = log === undefined ? undefined : new Teller(log, intervalMs);
  let deriving: DerivingStep | undefined;
  try {
    while (going()) {
      const turn = await next();
      teller?.applied(turn.applied);
      if (turn.deriving === undefined) return;
      const { version, through } = turn.deriving;
      if (deriving?.version !== version) {
        deriving = { version, ...(await count(through)), written: 0 };
      } else {
        deriving.written += MIGRATION_BATCH;
      }
      teller?.written(deriving);
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    teller?.stop();
  }
}

/** An operator sees a line at least this often while start-up migrates. */
export const PROGRESS_INTERVAL_MS = 10_000;

/**
 * Start-up's lines while it migrates, at most an interval apart: a step's progress at its
 * first batch, then at the interval; before any batch (a step building an index), a line
 * that it is still running. No turn holds the event loop (SQLite's run in a thread), so a
 * timer tells the latest when no batch came in time.
 */
class Teller {
  private readonly started = Date.now();
  private told = this.started;
  /** The step now writing every book, and when this start began it. */
  private step: { version: number; started: number } | undefined;
  private latest: MigrationProgress | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: MigrationLog,
    private readonly intervalMs: number,
  ) {
    this.arm();
  }

  /** A batch of a step that writes every book committed. */
  written({ version, of, done: before, written }: DerivingStep): void {
    const now = Date.now();
    if (this.step?.version !== version) {
      this.step = { version, started: now };
      this.latest = undefined;
    }
    const done = Math.min(of, before + written);
    const pace = written / Math.max(1, now - this.step.started);
    const secondsLeft = pace > 0 ? Math.ceil((of - done) / pace / 1000) : null;
    const first = this.latest === undefined;
    this.latest = { version, done, of, secondsLeft };
    if (first || now - this.told >= this.intervalMs) this.tell();
  }

  /** Steps a turn applied: a line each, and no step's progress until the next batch. */
  applied(steps: AppliedMigration[]): void {
    for (const step of steps) this.log.applied(step);
    if (steps.length === 0) return;
    this.latest = undefined;
    this.told = Date.now();
    this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private tell(): void {
    this.told = Date.now();
    if (this.latest !== undefined) this.log.progress(this.latest);
    else this.log.running({ seconds: Math.round((this.told - this.started) / 1000) });
    this.arm();
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tell(), this.intervalMs - (Date.now() - this.told));
    this.timer.unref();
  }
}

const CHANGE =
  /\b(CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+)?(?:UNIQUE\s+|VIRTUAL\s+)?(TABLE|INDEX|TRIGGER|VIEW|FUNCTION|SEQUENCE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(\w+)(?:\s+ADD\s+COLUMN\s+(\w+))?/gi;
const NOTHING = /^\s*-- nothing: ([^\n]*)/;
const DERIVES = {
  words: "writes every book's search words",
  "words and keys": "writes every book's search words and sort keys",
  "postgres words": "writes every book's search words",
  "sqlite unspaced words": "writes the search words of every book written without spaces",
} as const;

/** A step as applied on one engine: its SQL there, and whether it derived there. */
export function describeMigration(
  step: Migration,
  sql: string,
  derived: boolean,
): AppliedMigration {
  const nothing = NOTHING.exec(sql)?.[1];
  const changes = [...sql.matchAll(CHANGE)].map(([, verb, kind, name, column]) =>
    column === undefined
      ? `${verb?.toLowerCase()} ${kind?.toLowerCase()} ${name}`
      : `add column ${name}.${column}`,
  );
  if (derived && step.derive !== undefined) changes.push(DERIVES[step.derive]);
  const does =
    changes.length > 0
      ? [...new Set(changes)].join(", ")
      : `nothing to do on this store (${nothing ?? "no statement"})`;
  return { version: step.version, does };
}
