// A book's version: what HTTP sends as its ETag, and what a write made on a condition
// (If-Match) compares inside its own transaction, the same on both stores.
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

/** The versions a conditional write accepts: any ("*"), or those listed. */
export type ExpectedVersions = "*" | readonly string[];

export function versionMatches(book: Book, expected: ExpectedVersions): boolean {
  return expected === "*" || expected.includes(bookVersion(book));
}
