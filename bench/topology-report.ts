// What one step of the topology run cost, in figures, and the report that npm run topology
// prints and writes to docs/topology-report.md.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { isError, isWrite, type Outcome, type Transition } from "./topology-load.js";

export interface Step {
  name: string;
  outcomes: Outcome[];
  /** When the load began and ended, and when the fault was made (ms since the run began). */
  began: number;
  ended: number;
  faultAt?: number;
  transitions: Transition[];
  /** What the step observed beyond the answers: haproxy's detection, exit codes, timings. */
  notes: string[];
}

export interface Lost {
  creates: number;
  createsAcknowledged: number;
  updates: number;
  updatesChecked: number;
}

// Before anything of the run's own: whatever else the machine was doing meanwhile.
const LOAD_AT_START = loadavg()[0] ?? 0;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const count = (n: number) => n.toLocaleString("en");

/** Errors by status, most first, each with its requests by kind: "503 × 12 (get 8, create 4)". */
export function errorsByStatus(outcomes: Outcome[]): string {
  const counts = new Map<string, Map<string, number>>();
  for (const outcome of outcomes.filter(isError)) {
    const key =
      outcome.status === "network" ? `network (${outcome.cause})` : String(outcome.status);
    const kinds = counts.get(key) ?? new Map<string, number>();
    kinds.set(outcome.kind, (kinds.get(outcome.kind) ?? 0) + 1);
    counts.set(key, kinds);
  }
  if (counts.size === 0) return "none";
  const total = (kinds: Map<string, number>) => [...kinds.values()].reduce((a, b) => a + b, 0);
  return [...counts]
    .sort((a, b) => total(b[1]) - total(a[1]))
    .map(([status, kinds]) => {
      const byKind = [...kinds].map(([kind, n]) => `${kind} ${count(n)}`).join(", ");
      return `${status} × ${count(total(kinds))} (${byKind})`;
    })
    .join(", ");
}

/** The first and last error's start, from the fault (or the step's start). */
/**
 * What a fault may cost a request is a 503 (the store, or an instance, away): any other answer
 * that is not 2xx (a 400 blaming the request, a 404 for a book that exists, a 500) is a defect.
 * The step's line saying so, by status and kind of request; undefined when there is none.
 */
export function unexpectedAnswers(step: Step): string | undefined {
  const wrong = step.outcomes.filter(
    (o) => typeof o.status === "number" && (o.status < 200 || o.status >= 300) && o.status !== 503,
  );
  if (wrong.length === 0) return undefined;
  return `${step.name}: ${count(wrong.length)} answers neither 2xx nor 503: ${errorsByStatus(wrong)}.`;
}

export function errorWindow(step: Step): string {
  const errors = step.outcomes.filter(isError);
  if (errors.length === 0) return "–";
  const from = step.faultAt ?? step.began;
  const first = Math.min(...errors.map((o) => o.start)) - from;
  const last = Math.max(...errors.map((o) => o.end)) - from;
  return `${seconds(first)} → ${seconds(last)} (${seconds(last - first)})`;
}

/**
 * When writes succeeded again: the end of the first acknowledged write that began after the
 * last failed write began, from the fault; undefined when no write failed.
 */
export function writesBackAfter(step: Step): number | undefined {
  const writes = step.outcomes.filter(isWrite);
  const failed = writes.filter(isError);
  if (failed.length === 0 || step.faultAt === undefined) return undefined;
  const lastFailure = Math.max(...failed.map((o) => o.start));
  const next = writes
    .filter((o) => !isError(o) && o.start > lastFailure)
    .sort((a, b) => a.start - b.start)[0];
  return next === undefined ? Number.POSITIVE_INFINITY : next.end - step.faultAt;
}

/** Requests, their rate, and the slowest answer: a request that hung shows here. */
export function throughput(step: Step): string {
  const ms = step.ended - step.began;
  const rate = Math.round(step.outcomes.length / (ms / 1000));
  const slowest = Math.max(0, ...step.outcomes.map((o) => o.end - o.start));
  return `${count(step.outcomes.length)} in ${seconds(ms)}: ${count(rate)} req/s; slowest ${seconds(slowest)}`;
}

function command(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
      .split("\n")[0]
      ?.trim() as string;
  } catch {
    return "(not found)";
  }
}

/** The machine and the versions the figures were measured with. */
export function environment(haproxy: string): string[] {
  const debian = (() => {
    try {
      return `Debian ${readFileSync("/etc/debian_version", "utf8").trim()}`;
    } catch {
      return "Linux";
    }
  })();
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const memory = `${Math.round(totalmem() / 2 ** 30)} GiB`;
  return [
    `- Date: ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
    `- Machine: ${debian}, ${cpus().length} cores (${cpu}), ${memory} of memory; every process of the topology and the load on it`,
    `- haproxy: ${command(haproxy, ["-v"])}`,
    `- pgbouncer: ${command("/usr/sbin/pgbouncer", ["--version"])}`,
    `- PostgreSQL: ${command("/usr/lib/postgresql/15/bin/postgres", ["--version"])}`,
    `- Node: ${process.version}; Redis: ${command("redis-server", ["--version"])}`,
    `- Load average when the run began ${LOAD_AT_START.toFixed(2)}, when it ended ${(loadavg()[0] ?? 0).toFixed(2)}: other work on the machine moves the throughput from run to run`,
  ];
}

export function lostText(lost: Lost | undefined): string {
  if (lost === undefined) return "–";
  return (
    `${count(lost.creates)} of ${count(lost.createsAcknowledged)} creates, ` +
    `${count(lost.updates)} of ${count(lost.updatesChecked)} updates checked`
  );
}

/** The report: the environment, the table, then what each figure means and what went wrong. */
export function renderReport(options: {
  environment: string[];
  rows: string[][];
  meanings: string[];
  defects: string[];
  settings: string[];
}): string {
  const header = [
    "Step",
    "Load",
    "Errors (non-2xx, timeouts)",
    "Errors, from the fault",
    "Recovery",
    "Acknowledged writes lost",
  ];
  const table = [header, header.map(() => "---"), ...options.rows].map(
    (row) => `| ${row.join(" | ")} |`,
  );
  return [
    "# The topology, measured",
    "",
    "`npm run topology` brings up the recommended setup of [docs/topology.md](topology.md) on one",
    "machine, from the files in `deploy/`, runs a mixed load through it, and makes each fault",
    "below under that load. This page is its last report; run it again to replace it.",
    "",
    ...options.environment,
    ...options.settings,
    "",
    ...table,
    "",
    "## What the figures mean",
    "",
    ...options.meanings.map((line) => `- ${line}`),
    "",
    "## Defects and surprises",
    "",
    ...(options.defects.length === 0
      ? [
          "None: no answer other than 2xx or 503, no request without an answer, no instance exited on its own, no acknowledged write lost.",
        ]
      : options.defects.map((line) => `- ${line}`)),
    "",
  ].join("\n");
}

export interface Row {
  id: number;
  title: string;
  author: string;
  year: number;
}

/**
 * Acknowledged writes missing from the database, for each step. A 201's book must be there
 * with its title and author (an update changes only the year). An acknowledged update is
 * checked when it was the last update of its book and no other overlapped it: then the
 * book must have its year, whatever happened afterwards.
 */
export function lostWrites(outcomes: Outcome[], rows: Map<number, Row>): Map<string, Lost> {
  const lost = new Map<string, Lost>();
  const of = (step: string) => {
    let entry = lost.get(step);
    if (entry === undefined) {
      entry = { creates: 0, createsAcknowledged: 0, updates: 0, updatesChecked: 0 };
      lost.set(step, entry);
    }
    return entry;
  };
  const updates = new Map<number, Outcome[]>();
  for (const outcome of outcomes) {
    if (outcome.kind === "create" && outcome.status === 201 && outcome.id !== undefined) {
      const row = rows.get(outcome.id);
      of(outcome.step).createsAcknowledged += 1;
      if (row?.title !== outcome.book?.title || row?.author !== outcome.book?.author) {
        of(outcome.step).creates += 1;
      }
    }
    if (outcome.kind === "update" && outcome.id !== undefined) {
      updates.set(outcome.id, [...(updates.get(outcome.id) ?? []), outcome]);
    }
  }
  for (const [id, attempts] of updates) {
    const last = attempts.reduce((a, b) => (b.start > a.start ? b : a));
    const overlapped = attempts.some((o) => o !== last && o.end > last.start);
    if (last.status !== 200 || overlapped) continue;
    of(last.step).updatesChecked += 1;
    if (rows.get(id)?.year !== last.book?.year) of(last.step).updates += 1;
  }
  return lost;
}
