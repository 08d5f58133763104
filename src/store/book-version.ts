// A book's version: what HTTP sends as its ETag, and what a write made on a condition
// (If-Match, If-Unmodified-Since, If-None-Match) compares inside its own transaction, the same
// on both stores.
import { hash } from "node:crypto";
import type { Book } from "../rules/book.js";

/**
 * A digest of the book's fields: it changes whenever the stored book changes, and comes back
 * only with the same fields, so no column keeps it and a restored catalogue keeps its
 * versions. SHA-1 is not here to resist an attacker (a client can read the book anyway), only
 * to tell versions apart; 27 characters of base64url.
 */
export function bookVersion(book: Book): string {
  let version = versions.get(book);
  if (version === undefined) {
    version = hash(
      "sha1",
      JSON.stringify([book.id, book.title, book.author, book.year]),
      "base64url",
    );
    versions.set(book, version);
  }
  return version;
}

// A book is never changed once read (a change is a new object), and a kept book is the same
// object on every read of it: its version is worked out once, not on every GET (the digest was
// the largest cost of GET /book/{id} beyond Node's own; docs/performance.md).
const versions = new WeakMap<Book, string>();

/** Versions: any ("*"), or those listed. */
type Versions = "*" | readonly string[];

/**
 * What a conditional write asks of the book it finds: the versions it accepts (If-Match), or
 * as many of RFC 9110's preconditions as were sent, evaluated in its order (§13.2.2): If-Match,
 * else If-Unmodified-Since (ms; a book with no time of change passes), then If-None-Match (no
 * version listed, none at all for "*": a write on it never proceeds).
 */
export type ExpectedVersions =
  | Versions
  | { match?: Versions; unmodifiedSince?: number; noneMatch?: Versions };

const among = (version: string, versions: Versions) =>
  versions === "*" || versions.includes(version);

export function versionMatches(
  book: Book & { changedAt?: number | null },
  expected: ExpectedVersions,
): boolean {
  const version = bookVersion(book);
  if (expected === "*" || Array.isArray(expected)) return among(version, expected as Versions);
  const { match, unmodifiedSince, noneMatch } = expected as Exclude<ExpectedVersions, Versions>;
  if (match !== undefined && !among(version, match)) return false;
  // Compared to the second, as Last-Modified tells it.
  const changed = typeof book.changedAt === "number" ? Math.floor(book.changedAt / 1000) : 0;
  if (match === undefined && unmodifiedSince !== undefined && changed * 1000 > unmodifiedSince) {
    return false;
  }
  return noneMatch === undefined || !among(version, noneMatch);
}
