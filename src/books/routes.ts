import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { requireToken } from "../auth/require-token.js";
import type { TokenService } from "../auth/tokens.js";
import { TOKEN_SECURITY } from "../docs.js";
import { answerSchema, failures, Messages, respond } from "../envelope.js";
import {
  type BookPage,
  type BookQuery,
  type BookStore,
  SORT_FIELDS,
  type SortField,
} from "../store/store.js";
import {
  AUTHOR_MAX,
  type BookChanges,
  bookChangesSchema,
  bookSchema,
  type NewBook,
  newBookSchema,
  parseBookId,
  pickChanges,
  pickNewBook,
  TITLE_MAX,
  textSchema,
} from "./book.js";

const YEAR_PATTERN = "^-?(0|[1-9][0-9]{0,3})$";
const YEAR = new RegExp(YEAR_PATTERN);

export interface BookRoutesOptions {
  store: BookStore;
  tokens: TokenService;
}

/** Books fetched from the store per round trip while GET /books streams. */
export const LIST_PAGE_SIZE = 500;
/** A listing up to about this size is sent whole; a longer one streams. */
export const BUFFERED_LISTING_BYTES = 256 * 1024;
const LISTING_PREFIX = `{"status":200,"message":${JSON.stringify(Messages.booksRetrieved)},"data":[`;

const idParams = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", description: "A positive integer" } },
} as const;

const invalidInput = { invalidBodyMessage: Messages.invalidInput };

/** GET /books query parameters, as sent; all optional. */
interface ListParameters {
  limit?: string;
  after?: string;
  q?: string;
  author?: string;
  year?: string;
  sort?: string;
  after_key?: string;
}
type Filters = Omit<BookQuery, "limit">;

const SORTS = SORT_FIELDS.flatMap((field) => [field, `-${field}`]);

// Strings, checked by pattern: a number-like value must be written plainly, and a parameter
// given twice (an array) is refused.
const listParametersSchema = {
  type: "object",
  properties: {
    limit: {
      type: "string",
      pattern: "^(1000|[1-9][0-9]{0,2})$",
      description: "1 to 1000: one page of at most this many books, with a Link to the next",
    },
    after: {
      type: "string",
      pattern: "^(0|[1-9][0-9]*)$",
      description: "Only books with a greater id (the last id of the previous page)",
    },
    q: {
      ...textSchema(200),
      description: "Text found in the title or the author, in any case",
    },
    author: { ...textSchema(AUTHOR_MAX), description: "The author, exactly" },
    year: { type: "string", pattern: YEAR_PATTERN, description: "The year" },
    sort: {
      type: "string",
      enum: SORTS,
      description:
        "The order: id (the default), title, author or year, then id; a leading - reverses it. Titles and authors sort without regard to case",
    },
    after_key: {
      ...textSchema(TITLE_MAX),
      description:
        "With a sort by title, author or year and `after`: that book's title, author or year. The Link to the next page carries both",
    },
  },
} as const;

/**
 * The filters a valid query names; undefined when `after` is beyond any id, or when the cursor
 * does not fit the order (a sort by a field continues from `after` with its `after_key`).
 */
function listFilters(parameters: ListParameters): Filters | undefined {
  const after =
    parameters.after === undefined || parameters.after === "0" ? 0 : parseBookId(parameters.after);
  if (after === undefined) return undefined;
  const sort = (parameters.sort?.replace(/^-/, "") ?? "id") as SortField;
  const key = parameters.after_key;
  if ((sort !== "id" && after !== 0) !== (key !== undefined)) return undefined;
  const filters: Filters = { after, sort, descending: parameters.sort?.startsWith("-") === true };
  if (key !== undefined) {
    if (sort !== "year") filters.afterKey = key;
    else if (YEAR.test(key)) filters.afterKey = Number(key);
    else return undefined;
  }
  if (parameters.q !== undefined) filters.q = parameters.q;
  if (parameters.author !== undefined) filters.author = parameters.author;
  if (parameters.year !== undefined) filters.year = Number(parameters.year);
  return filters;
}

// What every book route may answer besides its own success.
const common = {
  401: [Messages.tokenRequired, Messages.invalidToken],
  500: [Messages.internalError],
  503: [Messages.serviceUnavailable],
};
const withBody = {
  ...common,
  400: [Messages.invalidInput, Messages.badRequest],
  413: [Messages.payloadTooLarge],
};
const withId = { ...common, 400: [Messages.badRequest], 404: [Messages.bookNotFound] };
const book = { tags: ["books"], security: TOKEN_SECURITY, params: idParams };

/** The five book routes; every one requires a token. */
export async function bookRoutes(app: FastifyInstance, { store, tokens }: BookRoutesOptions) {
  app.addHook("onRequest", requireToken(tokens));

  // The last whole listing, encoded. A store that caches pages returns the very same page
  // objects while nothing changed, and then the same bytes go out without encoding them again
  // (72 KB for 1,000 books: measured as the largest cost of the answer).
  let lastListing: { pages: BookPage[]; body: Buffer } | undefined;
  const wholeListing = (pages: BookPage[]): Buffer => {
    const last = lastListing;
    if (last?.pages.length === pages.length && last.pages.every((page, i) => page === pages[i])) {
      return last.body;
    }
    const body = Buffer.from(`${LISTING_PREFIX}${joinPages(pages)}]}`);
    lastListing = { pages, body };
    return body;
  };

  app.post<{ Body: NewBook }>(
    "/book",
    {
      schema: {
        summary: "Add a book",
        tags: ["books"],
        security: TOKEN_SECURITY,
        body: newBookSchema,
        response: {
          201: answerSchema(bookSchema, Messages.bookCreated),
          ...failures(withBody),
        },
      },
      config: invalidInput,
    },
    async (request, reply) => {
      const book = await store.create(pickNewBook(request.body));
      return respond(reply, 201, Messages.bookCreated, book);
    },
  );

  app.get<{ Querystring: ListParameters }>(
    "/books",
    {
      schema: {
        summary:
          "List books: all of them, or a page, in id order or sorted, or those matching filters",
        tags: ["books"],
        security: TOKEN_SECURITY,
        querystring: listParametersSchema,
        response: {
          200: answerSchema({ type: "array", items: bookSchema }, Messages.booksRetrieved),
          ...failures({ ...common, 400: [Messages.invalidInput, Messages.badRequest] }),
        },
      },
      config: invalidInput,
    },
    async (request, reply) => {
      const parameters = request.query;
      const filters = listFilters(parameters);
      if (filters === undefined) return respond(reply, 400, Messages.invalidInput);
      reply.type("application/json; charset=utf-8");
      if (parameters.limit !== undefined) {
        const limit = Number(parameters.limit);
        const page = await store.list({ ...filters, limit });
        if (page.count === limit) {
          const cursor = pageCursor(page);
          const next = await store.list({ ...filters, ...cursor, limit: 1 });
          if (next.count > 0) {
            const link = new URLSearchParams({ ...parameters, after: String(page.lastId) });
            if (cursor.afterKey !== undefined) link.set("after_key", String(cursor.afterKey));
            reply.header("link", `</books?${link}>; rel="next"`);
          }
        }
        return reply.send(`${LISTING_PREFIX}${page.json}]}`);
      }
      // Pages are gathered up to a budget before answering: a listing that fits goes out as one
      // body (and a store that is down still gets a 503); a longer one streams the rest.
      // (next() by hand: leaving a for-await loop would close the pages the tail still needs.)
      const pages = pagesOf(store, filters);
      const head: BookPage[] = [];
      let bytes = 0;
      for (let next = await pages.next(); !next.done; next = await pages.next()) {
        head.push(next.value);
        bytes += next.value.json.length;
        if (bytes >= BUFFERED_LISTING_BYTES && next.value.count === LIST_PAGE_SIZE) {
          return reply.send(Readable.from(listingTail(head, pages)));
        }
      }
      return reply.send(wholeListing(head));
    },
  );

  app.get<{ Params: { id: string } }>(
    "/book/:id",
    {
      schema: {
        ...book,
        summary: "Read one book",
        response: { 200: answerSchema(bookSchema, Messages.bookRetrieved), ...failures(withId) },
      },
    },
    async (request, reply) => {
      const id = parseBookId(request.params.id);
      const book = id === undefined ? undefined : await store.get(id);
      if (book === undefined) return respond(reply, 404, Messages.bookNotFound);
      return respond(reply, 200, Messages.bookRetrieved, book);
    },
  );

  app.put<{ Params: { id: string }; Body: BookChanges }>(
    "/book/:id",
    {
      schema: {
        ...book,
        summary: "Change some or all of a book's fields",
        body: bookChangesSchema,
        response: {
          200: answerSchema(bookSchema, Messages.bookUpdated),
          ...failures({ ...withId, ...withBody }),
        },
      },
      // The specification looks the book up before it examines the body, so validation
      // failures are judged in the handler: a missing book is 404 whatever the body.
      attachValidation: true,
      config: invalidInput,
    },
    async (request, reply) => {
      const id = parseBookId(request.params.id);
      if (id === undefined) return respond(reply, 404, Messages.bookNotFound);
      if (request.validationError) {
        const exists = (await store.get(id)) !== undefined;
        if (!exists) return respond(reply, 404, Messages.bookNotFound);
        return respond(reply, 400, Messages.invalidInput);
      }
      // A valid body goes straight to the update, which finds no book when there is none: the
      // same answers as looking first, with one store round trip instead of two.
      const updated = await store.update(id, pickChanges(request.body));
      if (updated === undefined) return respond(reply, 404, Messages.bookNotFound);
      return respond(reply, 200, Messages.bookUpdated, updated);
    },
  );

  app.delete<{ Params: { id: string } }>(
    "/book/:id",
    {
      schema: {
        ...book,
        summary: "Delete a book",
        response: {
          200: answerSchema({ type: "null" }, Messages.bookDeleted),
          ...failures(withId),
        },
      },
    },
    async (request, reply) => {
      const id = parseBookId(request.params.id);
      const removed = id === undefined ? false : await store.remove(id);
      if (!removed) return respond(reply, 404, Messages.bookNotFound);
      return respond(reply, 200, Messages.bookDeleted);
    },
  );
}

const joinPages = (pages: BookPage[]) =>
  pages
    .filter((page) => page.count > 0)
    .map((page) => page.json)
    .join(",");

/** Where the page after this one starts. */
const pageCursor = (page: BookPage) =>
  page.lastKey === null ? { after: page.lastId } : { after: page.lastId, afterKey: page.lastKey };

/** The pages a listing's filters select, in order, read one at a time as they are taken. */
async function* pagesOf(store: BookStore, filters: Filters): AsyncGenerator<BookPage> {
  for (let query = filters; ; ) {
    const page = await store.list({ ...query, limit: LIST_PAGE_SIZE });
    yield page;
    if (page.count < LIST_PAGE_SIZE) return;
    query = { ...filters, ...pageCursor(page) };
  }
}

/**
 * A long GET /books answer: the pages read so far, then the rest page by page. Memory holds
 * one page whatever the size of the catalogue, and the next page is read only when the
 * client has taken the last one.
 */
async function* listingTail(head: BookPage[], rest: AsyncGenerator<BookPage>) {
  yield `${LISTING_PREFIX}${joinPages(head)}`;
  for await (const page of rest) if (page.count > 0) yield `,${page.json}`;
  yield "]}";
}
