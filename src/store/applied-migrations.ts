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

/**
 * Takes `next` turns until the schema is current or `going()` is false, telling `log` each
 * step applied and a long one's progress (`count`: the books, and those through an id). The
 * event loop runs between turns: the port's start-up answers go on, and the lines go out.
 */
export async function takeTurns(
  next: () => Promise<MigrationTurn>,
  count: (through: number) => Promise<{ of: number; done: number }>,
  log: MigrationLog | undefined,
  going: () => boolean = () => true,
): Promise<void> {
  let deriving: { version: number; written: number; tell: (written: number) => void } | undefined;
  while (going()) {
    const turn = await next();
    for (const applied of turn.applied) log?.applied(applied);
    if (turn.deriving === undefined) return;
    const { version, through } = turn.deriving;
    if (deriving?.version !== version) {
      const { of, done } = await count(through);
      deriving = { version, written: 0, tell: progressOf(version, of, done, log) };
    } else {
      deriving.written += MIGRATION_BATCH;
    }
    deriving.tell(deriving.written);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** An operator sees a line at least this often while a step writes every book. */
export const PROGRESS_INTERVAL_MS = 10_000;

/**
 * Told the books a step has written, in its batches: tells `log` at its first batch, then
 * once PROGRESS_INTERVAL_MS have passed since the last line.
 */
function progressOf(
  version: number,
  of: number,
  doneBefore: number,
  log: MigrationLog | undefined,
): (writtenNow: number) => void {
  const started = Date.now();
  let told = Number.NEGATIVE_INFINITY;
  return (writtenNow) => {
    const now = Date.now();
    if (log === undefined || now - told < PROGRESS_INTERVAL_MS) return;
    told = now;
    const done = Math.min(of, doneBefore + writtenNow);
    const pace = writtenNow / Math.max(1, now - started);
    const secondsLeft = pace > 0 ? Math.ceil((of - done) / pace / 1000) : null;
    log.progress({ version, done, of, secondsLeft });
  };
}

const CHANGE =
  /\b(CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+)?(?:UNIQUE\s+|VIRTUAL\s+)?(TABLE|INDEX|TRIGGER|VIEW|FUNCTION|SEQUENCE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(\w+)(?:\s+ADD\s+COLUMN\s+(\w+))?/gi;
const NOTHING = /^\s*-- nothing: ([^\n]*)/;
const DERIVES = {
  words: "writes every book's search words",
  "words and keys": "writes every book's search words and sort keys",
  "postgres words": "writes every book's search words",
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
