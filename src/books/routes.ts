import { Readable } from "node:stream";
import { setImmediate as turn } from "node:timers/promises";
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from "fastify";
import { requireToken } from "../auth/require-token.js";
import type { TokenService } from "../auth/tokens.js";
import { TOKEN_SECURITY } from "../http/docs.js";
import { Messages, respond } from "../http/envelope.js";
import { answerSchema, failures, ROUTED_ANSWER_HEADERS, schemaRef } from "../http/openapi.js";
import type { BookChanges, NewBook } from "../rules/book.js";
import type { BookPage, BookStore } from "../store/store.js";
import {
  type Filters,
  type ListParameters,
  listFilters,
  listParametersSchema,
  matchFilters,
  readIntegerParameters,
} from "./listing.js";
import { MAX_ID, parseBookId, pickChanges, pickNewBook } from "./schemas.js";

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
  properties: {
    id: {
      type: "integer",
      minimum: 1,
      maximum: MAX_ID,
      description:
        "The book's id, written plainly (`12`, not `012` or `+12`). Any other id, like an id no book has, is 404 `Book not found`.",
    },
  },
} as const;

/**
 * An id written plainly becomes a number for the schema; any other is 404 `Book not found`, as
 * the contract says, before validation could call it a bad request.
 */
function readBookId(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
  const params = request.params as Record<string, unknown>;
  if (typeof params.id === "string") {
    const id = parseBookId(params.id);
    if (id === undefined) {
      respond(reply, 404, Messages.bookNotFound);
      return;
    }
    params.id = id;
  }
  done();
}

/** `Prefer: count=exact` (RFC 7240, as PostgREST asks for a count): the total is wanted. */
const COUNT_PREFERENCE = /(^|[,;\s])count=exact([,;\s]|$)/i;

const preferHeader = {
  type: "object",
  properties: {
    prefer: {
      type: "string",
      description:
        "`count=exact` asks for the number of books the filters (`q`, `author`, `year`) match, in `X-Total-Count`; it is counted only when asked. Other preferences are ignored.",
      examples: ["count=exact"],
    },
  },
} as const;

const listingHeaders: typeof ROUTED_ANSWER_HEADERS = {
  ...ROUTED_ANSWER_HEADERS,
  link: {
    type: "string",
    description:
      'With `limit`, while more books remain: `</books?…&after=…>; rel="next"`, the next page (with `after_key` when sorted by a field).',
  },
  "x-total-count": {
    type: "integer",
    description:
      "Only when asked with `Prefer: count=exact`: how many books the filters match, on every page, whatever `limit`, `after` and `sort`. Counted apart from the page, so a write in between may make them disagree.",
  },
  "preference-applied": {
    type: "string",
    description: "`count=exact` when the total was counted",
  },
};

const invalidInput = { invalidBodyMessage: Messages.invalidInput };

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
        operationId: "createBook",
        summary: "Add a book",
        description:
          "Adds a book with the three fields, all required, and answers it with the id the service gave it. Ids are never reused.",
        tags: ["books"],
        security: TOKEN_SECURITY,
        body: schemaRef("NewBook"),
        response: {
          201: answerSchema("BookEnvelope", [Messages.bookCreated]),
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
        operationId: "listBooks",
        summary:
          "List books: all of them, or a page, in id order or sorted, or those matching filters",
        description:
          "Without parameters, every book by ascending id, streamed. With `limit`, one page, and a `Link` header to the next while more remain: pages follow a cursor (`after`, and `after_key` when sorted by a field), never an offset. The filters combine. With `Prefer: count=exact`, `X-Total-Count` tells how many books the filters match.",
        tags: ["books"],
        security: TOKEN_SECURITY,
        querystring: listParametersSchema,
        headers: preferHeader,
        response: {
          200: answerSchema("BooksEnvelope", [Messages.booksRetrieved], listingHeaders),
          ...failures({
            ...common,
            400: [Messages.invalidInput, Messages.badRequest, Messages.searchTooBroad],
          }),
        },
      },
      config: invalidInput,
      preValidation: (request, _reply, done) => {
        readIntegerParameters(request.query as Record<string, unknown>);
        done();
      },
    },
    async (request, reply) => {
      const parameters = request.query;
      const filters = listFilters(parameters);
      if (filters === undefined) return respond(reply, 400, Messages.invalidInput);
      reply.type("application/json; charset=utf-8");
      const prefer = request.headers.prefer;
      if (typeof prefer === "string" && COUNT_PREFERENCE.test(prefer)) {
        reply.header("x-total-count", String(await store.count(matchFilters(parameters))));
        reply.header("preference-applied", "count=exact");
      }
      if (parameters.limit !== undefined) {
        const limit = parameters.limit;
        const page = await store.list({ ...filters, limit });
        if (page.partial || page.count === limit) {
          const cursor = pageCursor(page);
          // A partial page says itself that more may follow.
          const next = page.partial ? page : await store.list({ ...filters, ...cursor, limit: 1 });
          if (next.partial || next.count > 0) {
            const link = new URLSearchParams(
              Object.entries({ ...parameters, after: page.lastId }).map(
                ([name, value]): [string, string] => [name, String(value)],
              ),
            );
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
        if (bytes >= BUFFERED_LISTING_BYTES && hasMore(next.value)) {
          return reply.send(Readable.from(listingTail(head, pages)));
        }
      }
      return reply.send(wholeListing(head));
    },
  );

  app.get<{ Params: { id: number } }>(
    "/book/:id",
    {
      schema: {
        ...book,
        operationId: "getBook",
        summary: "Read one book",
        description: "Answers the book with this id.",
        response: {
          200: answerSchema("BookEnvelope", [Messages.bookRetrieved]),
          ...failures(withId),
        },
      },
      preValidation: readBookId,
    },
    async (request, reply) => {
      const book = await store.get(request.params.id);
      if (book === undefined) return respond(reply, 404, Messages.bookNotFound);
      return respond(reply, 200, Messages.bookRetrieved, book);
    },
  );

  app.put<{ Params: { id: number }; Body: BookChanges }>(
    "/book/:id",
    {
      schema: {
        ...book,
        operationId: "updateBook",
        summary: "Change some or all of a book's fields",
        description:
          "Applies the fields sent on top of the stored book; those left out keep their values. The book is looked up first: a missing book is 404 whatever the body.",
        body: schemaRef("BookChanges"),
        response: {
          200: answerSchema("BookEnvelope", [Messages.bookUpdated]),
          ...failures({ ...withId, ...withBody }),
        },
      },
      // The specification looks the book up before it examines the body, so validation
      // failures are judged in the handler: a missing book is 404 whatever the body.
      attachValidation: true,
      config: invalidInput,
      preValidation: readBookId,
    },
    async (request, reply) => {
      const id = request.params.id;
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

  app.delete<{ Params: { id: number } }>(
    "/book/:id",
    {
      schema: {
        ...book,
        operationId: "deleteBook",
        summary: "Delete a book",
        description:
          "Deletes the book with this id; a later read of it is 404. Ids are never reused.",
        response: {
          200: answerSchema("EmptyEnvelope", [Messages.bookDeleted]),
          ...failures(withId),
        },
      },
      preValidation: readBookId,
    },
    async (request, reply) => {
      const removed = await store.remove(request.params.id);
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

/** Whether a page of LIST_PAGE_SIZE books may have more after it. */
const hasMore = (page: BookPage) => page.partial === true || page.count === LIST_PAGE_SIZE;

/** The pages a listing's filters select, in order, read one at a time as they are taken. */
async function* pagesOf(store: BookStore, filters: Filters): AsyncGenerator<BookPage> {
  for (let query = filters; ; ) {
    const page = await store.list({ ...query, limit: LIST_PAGE_SIZE });
    yield page;
    if (!hasMore(page)) return;
    // A partial page used up a search's bound of work: let other requests run before the next.
    if (page.partial) await turn();
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
