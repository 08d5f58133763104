import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { requireToken } from "../auth/require-token.js";
import type { TokenService } from "../auth/tokens.js";
import { envelopeSchema, errorEnvelopeSchema, Messages, respond } from "../envelope.js";
import type { BookPage, BookStore } from "../store/store.js";
import {
  type BookChanges,
  bookChangesSchema,
  bookSchema,
  type NewBook,
  newBookSchema,
  parseBookId,
  pickChanges,
  pickNewBook,
} from "./book.js";

export interface BookRoutesOptions {
  store: BookStore;
  tokens: TokenService;
}

/** Books fetched from the store per round trip while GET /books streams. */
export const LIST_PAGE_SIZE = 500;

const idParams = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", description: "A positive integer" } },
} as const;

const errors = { "4xx": errorEnvelopeSchema, "5xx": errorEnvelopeSchema } as const;
const bookEnvelope = envelopeSchema(bookSchema);
const invalidInput = { invalidBodyMessage: Messages.invalidInput };

/** The five book routes; every one requires a token. */
export async function bookRoutes(app: FastifyInstance, { store, tokens }: BookRoutesOptions) {
  app.addHook("onRequest", requireToken(tokens));

  app.post<{ Body: NewBook }>(
    "/book",
    {
      schema: { body: newBookSchema, response: { 201: bookEnvelope, ...errors } },
      config: invalidInput,
    },
    async (request, reply) => {
      const book = await store.create(pickNewBook(request.body));
      return respond(reply, 201, Messages.bookCreated, book);
    },
  );

  app.get(
    "/books",
    {
      schema: {
        response: { 200: envelopeSchema({ type: "array", items: bookSchema }), ...errors },
      },
    },
    async (_request, reply) => {
      // The first page is read before answering, so a store that is down still gets a 503.
      const first = await store.list(0, LIST_PAGE_SIZE);
      reply.type("application/json; charset=utf-8");
      return reply.send(Readable.from(listingChunks(store, first)));
    },
  );

  app.get<{ Params: { id: string } }>(
    "/book/:id",
    { schema: { params: idParams, response: { 200: bookEnvelope, ...errors } } },
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
        params: idParams,
        body: bookChangesSchema,
        response: { 200: bookEnvelope, ...errors },
      },
      // The specification looks the book up before it examines the body, so validation
      // failures are judged in the handler, after the 404 check.
      attachValidation: true,
      config: invalidInput,
    },
    async (request, reply) => {
      const id = parseBookId(request.params.id);
      const existing = id === undefined ? undefined : await store.get(id);
      if (id === undefined || existing === undefined) {
        return respond(reply, 404, Messages.bookNotFound);
      }
      if (request.validationError) return respond(reply, 400, Messages.invalidInput);
      const updated = await store.update(id, pickChanges(request.body));
      if (updated === undefined) return respond(reply, 404, Messages.bookNotFound);
      return respond(reply, 200, Messages.bookUpdated, updated);
    },
  );

  app.delete<{ Params: { id: string } }>(
    "/book/:id",
    {
      schema: { params: idParams, response: { 200: envelopeSchema({ type: "null" }), ...errors } },
    },
    async (request, reply) => {
      const id = parseBookId(request.params.id);
      const removed = id === undefined ? false : await store.remove(id);
      if (!removed) return respond(reply, 404, Messages.bookNotFound);
      return respond(reply, 200, Messages.bookDeleted);
    },
  );
}

/**
 * The GET /books envelope, written page by page: memory holds one page whatever the size of
 * the catalogue, and the next page is read only when the client has taken the last one.
 */
async function* listingChunks(store: BookStore, first: BookPage): AsyncGenerator<string> {
  yield `{"status":200,"message":${JSON.stringify(Messages.booksRetrieved)},"data":[`;
  let page = first;
  let separator = "";
  while (page.count > 0) {
    yield separator + page.json;
    separator = ",";
    if (page.count < LIST_PAGE_SIZE) break;
    page = await store.list(page.lastId, LIST_PAGE_SIZE);
  }
  yield "]}";
}
