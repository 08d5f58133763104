// Conditional requests on one book (RFC 9110 §13): the ETag a book is sent with, and what
// If-Match, If-Unmodified-Since and If-None-Match ask of it.
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyReply } from "fastify";
import type { Book } from "../rules/book.js";
import { bookVersion, type ExpectedVersions } from "../store/book-version.js";
import type { StoredBook } from "../store/store.js";

/** The book's ETag header value: its version, quoted, a strong validator. */
export const entityTag = (book: Book) => `"${bookVersion(book)}"`;

/**
 * A single-book answer's validators: its ETag, and Last-Modified when the store knows when the
 * book last changed (not for one unchanged since before the change log).
 */
export function versionHeaders(reply: FastifyReply, book: StoredBook): void {
  reply.header("etag", entityTag(book));
  if (typeof book.changedAt === "number") reply.header("last-modified", httpDate(book));
}

/**
 * The book's Last-Modified, formatted once for each book object: a book read by id is kept
 * (read-caches.ts), and formatting the date on every answer cost reads by id a tenth. A write
 * answers a new object each time, mostly in the second of the write before: the last second
 * formatted is kept too (formatting each cost a create about 5 µs of its CPU, a profile of 2 %).
 */
const httpDates = new WeakMap<StoredBook, string>();
let lastSecond = Number.NaN;
let lastDate = "";
function httpDate(book: StoredBook): string {
  const second = Math.floor((book.changedAt as number) / 1000);
  if (second === lastSecond) return lastDate;
  let date = httpDates.get(book);
  if (date === undefined) {
    date = new Date(second * 1000).toUTCString();
    httpDates.set(book, date);
    lastSecond = second;
    lastDate = date;
  }
  return date;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH = `(?<month>${MONTHS.join("|")})`;
const TIME = "(?<hours>\\d\\d):(?<minutes>\\d\\d):(?<seconds>\\d\\d)";
const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
/** RFC 9110 §5.6.7's three forms: IMF-fixdate, RFC 850's (a two-digit year), asctime's. */
const HTTP_DATES = [
  `^${DAY}, (?<day>\\d\\d) ${MONTH} (?<year>\\d{4}) ${TIME} GMT$`,
  `^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (?<day>\\d\\d)-${MONTH}-(?<year>\\d\\d) ${TIME} GMT$`,
  `^${DAY} ${MONTH} (?<day>[ \\d]\\d) ${TIME} (?<year>\\d{4})$`,
].map((form) => new RegExp(form));

/** A two-digit year more than 50 years ahead is the last such year past (RFC 9110). */
function fullYear(twoDigits: number): number {
  const now = new Date().getUTCFullYear();
  const year = now - (now % 100) + twoDigits;
  return year > now + 50 ? year - 100 : year;
}

/**
 * An HTTP-date in ms since the epoch; NaN for any other text, which a precondition then ignores
 * (RFC 9110 §13.1.4). Not Date.parse: it reads "2024", "12" or "Book 7" as dates.
 */
export function parseHttpDate(text: string | undefined): number {
  const fields = HTTP_DATES.map((form) => form.exec(text ?? "")).find(Boolean)?.groups;
  if (fields === undefined) return Number.NaN;
  const [day, hours, minutes, seconds] = [
    fields.day,
    fields.hours,
    fields.minutes,
    fields.seconds,
  ].map(Number);
  const year =
    (fields.year as string).length === 2 ? fullYear(Number(fields.year)) : Number(fields.year);
  const at = Date.UTC(year, MONTHS.indexOf(fields.month as string), day, hours, minutes, seconds);
  // 30 Feb or 24:00 is no date, though Date.UTC would roll it over (a leap second's :60 too).
  const date = new Date(at);
  const back = [date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()];
  return back.join() === [day, hours, minutes, seconds].join() ? at : Number.NaN;
}

interface ListedTag {
  weak: boolean;
  opaque: string;
}

/** The tags a header lists, or "*"; a tag written without quotes is taken as it stands. */
function listedTags(header: string): "*" | ListedTag[] {
  if (header.trim() === "*") return "*";
  return header
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const weak = part.startsWith("W/");
      const quoted = weak ? part.slice(2) : part;
      const opaque = /^"(.*)"$/.exec(quoted)?.[1] ?? quoted;
      return { weak, opaque };
    });
}

/**
 * The versions an If-Match header accepts; undefined without one. Compared strongly: a weak
 * tag matches nothing, so a write it guards is refused.
 */
function ifMatchVersions(header: string | undefined) {
  if (header === undefined) return undefined;
  const tags = listedTags(header);
  return tags === "*" ? "*" : tags.filter((tag) => !tag.weak).map((tag) => tag.opaque);
}

/**
 * What a write's precondition headers ask (RFC 9110 §13); undefined without any. If-None-Match
 * compares weakly; an If-Unmodified-Since that is not a date is ignored, as the RFC asks.
 */
export function writeConditions(headers: IncomingHttpHeaders): ExpectedVersions | undefined {
  const match = ifMatchVersions(headers["if-match"]);
  const since = parseHttpDate(headers["if-unmodified-since"]);
  const none = headers["if-none-match"];
  if (Number.isNaN(since) && none === undefined) return match;
  const tags = none === undefined ? undefined : listedTags(none);
  return {
    ...(match === undefined ? {} : { match }),
    ...(Number.isNaN(since) ? {} : { unmodifiedSince: since }),
    ...(tags === undefined ? {} : { noneMatch: tags === "*" ? "*" : tags.map((t) => t.opaque) }),
  };
}

/**
 * Whether an If-None-Match header names the book's version (weak comparison): the client holds
 * it already, and a GET answers 304.
 */
export function notModified(header: string | undefined, book: Book): boolean {
  if (header === undefined) return false;
  const tags = listedTags(header);
  if (tags === "*") return true;
  const version = bookVersion(book);
  return tags.some((tag) => tag.opaque === version);
}
