// The line start-up logs for each migration it applies: the version, and what the step did
// to the schema, read from its own SQL (CREATE, ALTER and DROP, with what they name) and from
// what it derives. A schema already current logs nothing.
import type { Migration } from "./migrations.js";

export interface AppliedMigration {
  version: number;
  does: string;
}

/** Told each migration applied, once its transaction has committed. */
export type OnMigrated = (applied: AppliedMigration) => void;

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
