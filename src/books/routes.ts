// The five book routes, every one behind the token, those that write for librarians and
// administrators only: each declares its schema (route-schemas.ts) and calls the store,
// nothing else.
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from "fastify";
import { requireToken, type TokenCheck } from "../auth/require-token.js";
import { allow, changedBy } from "../auth/signed-in.js";
import { Messages, respond } from "../http/envelope.js";
import { refuseInvalid } from "../http/errors.js";
import type { BookChanges, NewBook } from "../rules/book.js";
import type { BookStore } from "../store/store.js";
import { notModified, versionHeaders, writeConditions } from "./conditions.js";
import { listBooks } from "./list-books.js";
import { type ListParameters, readIntegerParameters } from "./listing.js";
import {
  createBookSchema,
  deleteBookSchema,
  getBookSchema,
  listBooksSchema,
  updateBookSchema,
} from "./route-schemas.js";
import { parseBookId, pickChanges, pickNewBook } from "./schemas.js";

export interface BookRoutesOptions {
  store: BookStore;
  tokenCheck: TokenCheck;
}

type WithId = { Params: { id: number } };
const invalidInput = { invalidBodyMessage: Messages.invalidInput };
const librarians = allow("librarian");

/**
 * An id written plainly becomes a number for the schema; any other is 404 `Book not found`, as
 * the contract says, before validation could call it a bad request.
 */
export function readBookId(
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
) {
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

export async function bookRoutes(app: FastifyInstance, { store, tokenCheck }: BookRoutesOptions) {
  app.addHook("onRequest", requireToken(tokenCheck));

  app.post<{ Body: NewBook }>(
    "/book",
    { schema: createBookSchema, config: invalidInput, onRequest: librarians },
    async (request, reply) => {
      const book = await store.create(pickNewBook(request.body), changedBy(request));
      versionHeaders(reply, book);
      return respond(reply, 201, Messages.bookCreated, book);
    },
  );

  app.get<{ Querystring: ListParameters }>(
    "/books",
    {
      schema: listBooksSchema,
      config: invalidInput,
      preValidation: (request, _reply, done) => {
        readIntegerParameters(request.query as Record<string, unknown>);
        done();
      },
    },
    listBooks(store),
  );

  app.get<WithId>(
    "/book/:id",
    { schema: getBookSchema, preValidation: readBookId },
    async (request, reply) => {
      const book = await store.get(request.params.id);
      if (book === undefined) return respond(reply, 404, Messages.bookNotFound);
      versionHeaders(reply, book);
      // HTTP forbids a body with 304.
      if (notModified(request.headers["if-none-match"], book)) return reply.code(304).send();
      return respond(reply, 200, Messages.bookRetrieved, book);
    },
  );

  app.put<WithId & { Body: BookChanges }>(
    "/book/:id",
    {
      schema: updateBookSchema,
      // The specification looks the book up before it examines the body, so validation
      // failures are judged in the handler: a missing book is 404 whatever the body.
      attachValidation: true,
      config: invalidInput,
      onRequest: librarians,
      preValidation: readBookId,
    },
    async (request, reply) => {
      const id = request.params.id;
      if (request.validationError) {
        const exists = (await store.get(id)) !== undefined;
        if (!exists) return respond(reply, 404, Messages.bookNotFound);
        return refuseInvalid(request, reply, request.validationError, Messages.invalidInput);
      }
      // A valid body goes straight to the update, which finds no book when there is none: the
      // same answers as looking first, with one store round trip instead of two.
      const expected = writeConditions(request.headers);
      const updated = await store.update(
        id,
        pickChanges(request.body),
        expected,
        changedBy(request),
      );
      if (updated === undefined) return respond(reply, 404, Messages.bookNotFound);
      versionHeaders(reply, updated);
      return respond(reply, 200, Messages.bookUpdated, updated);
    },
  );

  app.delete<WithId>(
    "/book/:id",
    { schema: deleteBookSchema, onRequest: librarians, preValidation: readBookId },
    async (request, reply) => {
      const expected = writeConditions(request.headers);
      const removed = await store.remove(request.params.id, expected, changedBy(request));
      if (!removed) return respond(reply, 404, Messages.bookNotFound);
      return respond(reply, 200, Messages.bookDeleted);
    },
  );
}
