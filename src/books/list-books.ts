// GET /books: one page with a Link to the next, or every book, sent whole when it is short
// and streamed page by page when it is long, so memory never grows with the catalogue.
import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Messages, respond } from "../http/envelope.js";
import { setReason } from "../http/reasons.js";
import type { BookPage, BookStore } from "../store/store.js";
import {
  type ListingQuery,
  type ListParameters,
  listParametersSchema,
  matchFilters,
  readListingQuery,
} from "./listing.js";
import { createPageTurns, type PageTurns } from "./page-turns.js";

/** Books fetched from the store per round trip while GET /books streams. */
export const LIST_PAGE_SIZE = 500;
/** A listing up to about this size is sent whole; a longer one streams. */
export const BUFFERED_LISTING_BYTES = 256 * 1024;
const LISTING_PREFIX = `{"status":200,"message":${JSON.stringify(Messages.booksRetrieved)},"data":[`;

/** `Prefer: count=exact` (RFC 7240, as PostgREST asks for a count): the total is wanted. */
const COUNT_PREFERENCE = /(^|[,;\s])count=exact([,;\s]|$)/i;

type ListRequest = FastifyRequest<{ Querystring: ListParameters }>;

/** The GET /books handler over `store`. */
export function listBooks(store: BookStore) {
  const wholeListing = lastListingKept();
  // Every listing of this app reads its pages in turn, within a slice of each turn of the loop.
  const turns = createPageTurns();
  return async (request: ListRequest, reply: FastifyReply) => {
    const parameters = request.query;
    const listing = readListingQuery(parameters);
    if ("reason" in listing) {
      setReason(reply, listing.reason);
      return respond(reply, 400, Messages.invalidInput);
    }
    reply.type("application/json; charset=utf-8");
    // A search's reads until the answer begins (count, pages, the look for a next page) share
    // one time limit: the store's, from now.
    const timed: ListingQuery = { ...listing, searchStarted: Date.now(), searchWaited: { ms: 0 } };
    const prefer = request.headers.prefer;
    if (typeof prefer === "string" && COUNT_PREFERENCE.test(prefer)) {
      const { searchStarted, searchWaited } = timed;
      const filters = { ...matchFilters(parameters), searchStarted, searchWaited };
      reply.header("x-total-count", String(await store.count(filters)));
      reply.header("preference-applied", "count=exact");
    }
    if (parameters.limit !== undefined) {
      return sendOnePage(store, turns, reply, parameters, timed, parameters.limit);
    }
    // Pages are gathered up to a budget before answering: a listing that fits goes out as one
    // body (and a store that is down still gets a 503); a longer one streams the rest.
    // (next() by hand: leaving a for-await loop would close the pages the tail still needs.)
    const pages = pagesOf(store, turns, timed);
    const head: BookPage[] = [];
    let bytes = 0;
    for (let next = await pages.next(); !next.done; next = await pages.next()) {
      head.push(next.value);
      bytes += next.value.json.length;
      if (bytes >= BUFFERED_LISTING_BYTES && hasMore(next.value)) {
        const cutOff = (error: unknown) =>
          request.log.warn(
            { reqId: request.id, err: error },
            "listing cut off: the store failed while it streamed",
          );
        // HEAD sends no body: the headers are those of a streamed answer, the rest is not read.
        if (request.method === "HEAD") {
          await pages.return(undefined);
          return reply.send(Readable.from([]));
        }
        // The answer has begun (200): the pages after it each have the limit to themselves.
        delete timed.searchStarted;
        return reply.send(Readable.from(listingTail(head, pages, cutOff)));
      }
    }
    return reply.send(wholeListing(head));
  };
}

/** One page of `limit` books, with a Link header to the next while more remain. */
async function sendOnePage(
  store: BookStore,
  turns: PageTurns,
  reply: FastifyReply,
  parameters: ListParameters,
  listing: ListingQuery,
  limit: number,
) {
  for (let wait = turns.wait(); wait !== undefined; wait = turns.wait()) await wait;
  const page = await store.list({ ...listing, limit });
  if (page.partial || page.count === limit) {
    const cursor = pageCursor(page);
    // A partial page says itself that more may follow.
    const next = page.partial ? page : await store.list({ ...listing, ...cursor, limit: 1 });
    if (next.partial || next.count > 0) {
      // The listing's own parameters only: anything else the caller sent (a token put in the
      // URL by mistake, say) is not echoed back.
      const link = new URLSearchParams(
        Object.entries({ ...parameters, after: page.lastId })
          .filter(([name]) => Object.hasOwn(listParametersSchema.properties, name))
          .map(([name, value]): [string, string] => [name, String(value)]),
      );
      if (cursor.afterKey !== undefined) link.set("after_key", String(cursor.afterKey));
      reply.header("link", `</books?${link}>; rel="next"`);
    }
  }
  return reply.send(`${LISTING_PREFIX}${page.json}]}`);
}

/**
 * The last whole listing, encoded. A store that caches pages returns the very same page
 * objects while nothing changed, and then the same bytes go out without encoding them again
 * (the largest cost of the answer: see docs/performance.md).
 */
function lastListingKept(): (pages: BookPage[]) => Buffer {
  let lastListing: { pages: BookPage[]; body: Buffer } | undefined;
  return (pages) => {
    const last = lastListing;
    if (last?.pages.length === pages.length && last.pages.every((page, i) => page === pages[i])) {
      return last.body;
    }
    const body = Buffer.from(`${LISTING_PREFIX}${joinPages(pages)}]}`);
    lastListing = { pages, body };
    return body;
  };
}

const joinPages = (pages: BookPage[]) =>
  pages
    .filter((page) => page.count > 0)
    .map((page) => page.json)
    .join(",");

/** Where the page after this one starts. */
const pageCursor = (page: BookPage) =>
  page.lastKey === null ? { after: page.lastId } : { after: page.lastId, afterKey: page.lastKey };

/** Whether a page of LIST_PAGE_SIZE books may have more after it. */
const hasMore = (page: BookPage) => page.partial === true || page.count === LIST_PAGE_SIZE;

/**
 * The pages a listing selects, in order, read one at a time as they are taken, each in its
 * turn (page-turns.ts). The loop may turn between two pages, so each is read as the catalogue
 * then is, from the cursor on: a listing is not a snapshot (docs/api.md), as the pages of a
 * client that reads slowly never were.
 */
async function* pagesOf(
  store: BookStore,
  turns: PageTurns,
  listing: ListingQuery,
): AsyncGenerator<BookPage> {
  for (let query = listing; ; ) {
    // Asked and read in one synchronous step, so the next listing asking sees the time taken.
    for (let wait = turns.wait(); wait !== undefined; wait = turns.wait()) await wait;
    const page = await store.list({ ...query, limit: LIST_PAGE_SIZE });
    yield page;
    if (!hasMore(page)) return;
    query = { ...listing, ...pageCursor(page) };
  }
}

/**
 * A long GET /books answer: the pages read so far, then the rest page by page. Memory holds
 * one page whatever the size of the catalogue, and the next page is read only when the
 * client has taken the last one. A page the store fails to give ends the answer unfinished
 * (its status has gone out), and `cutOff` says why in the log.
 */
async function* listingTail(
  head: BookPage[],
  rest: AsyncGenerator<BookPage>,
  cutOff: (error: unknown) => void,
) {
  yield `${LISTING_PREFIX}${joinPages(head)}`;
  try {
    for await (const page of rest) if (page.count > 0) yield `,${page.json}`;
  } catch (error) {
    cutOff(error);
    throw error;
  }
  yield "]}";
}
