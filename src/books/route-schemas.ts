// What each book route declares: its parameters, body and answers, for validation, fast
// serialisation and the API description alike.
import { TOKEN_SECURITY } from "../http/docs.js";
import { Messages } from "../http/envelope.js";
import { answerSchema, failures, ROUTED_ANSWER_HEADERS, schemaRef } from "../http/openapi.js";
import { listParametersSchema } from "./listing.js";
import { MAX_ID } from "./schemas.js";

export const idParams = {
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

// Conditional requests: the ETag of an answer with one book, and the headers that use it.
export const bookHeaders: typeof ROUTED_ANSWER_HEADERS = {
  ...ROUTED_ANSWER_HEADERS,
  etag: {
    type: "string",
    description:
      "The book's version, a strong validator that changes whenever the stored book changes. Send it back in `If-Match` to change or delete the book only as it was read, or in `If-None-Match` to read it only once it has changed.",
  },
  "last-modified": {
    type: "string",
    description:
      "When the book was last created, changed or restored, to the second (an HTTP date). Absent for a book unchanged since before the change log, or since a backup was restored. `ETag` is the validator to send back.",
  },
};
const ifMatchHeader = {
  type: "object",
  properties: {
    "if-match": {
      type: "string",
      description:
        "Change the book only while its version is one of these ETags (`*`: any version): otherwise 412 `Book has changed` and nothing is written. A missing book is 404 first.",
      examples: ['"3PbzfKDDaEyK4g5Ffe-9PfGZxIo"'],
    },
    "if-unmodified-since": {
      type: "string",
      description:
        "Without `If-Match`: change the book only if it has not changed since this HTTP date (its `Last-Modified`, to the second): otherwise 412. A value that is not a date is ignored.",
    },
    "if-none-match": {
      type: "string",
      description:
        "Change the book only while its version is none of these ETags, compared weakly (`*`: never, the book exists): otherwise 412.",
    },
  },
} as const;
const ifNoneMatchHeader = {
  type: "object",
  properties: {
    "if-none-match": {
      type: "string",
      description:
        "When the book's version is one of these ETags (`*`: any), 304 with no body: the copy the client holds is current.",
    },
  },
} as const;
const notModified = {
  description: "Not modified: the book's version is one `If-None-Match` names. No body.",
  headers: bookHeaders,
  type: "null",
};

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
const conditional = { 412: [Messages.bookChanged] };
// A write by an account whose role is reader.
const forbidden = { 403: [Messages.forbidden] };
const books = { tags: ["books"], security: TOKEN_SECURITY };
const book = { ...books, params: idParams };

export const createBookSchema = {
  ...books,
  operationId: "createBook",
  summary: "Add a book",
  description:
    "Adds a book with the three fields, all required, and answers it with the id the service gave it. Ids are never reused. For librarians and administrators: an account whose role is reader gets 403 `Forbidden`.",
  body: schemaRef("NewBook"),
  response: {
    201: answerSchema("BookEnvelope", [Messages.bookCreated], bookHeaders),
    ...failures({ ...withBody, ...forbidden }),
  },
};

export const listBooksSchema = {
  ...books,
  operationId: "listBooks",
  summary: "List books: all of them, or a page, in id order or sorted, or those matching filters",
  description:
    "Without parameters, every book by ascending id, streamed. With `limit`, one page, and a `Link` header to the next while more remain: pages follow a cursor (`after`, and `after_key` when sorted by a field), never an offset. The filters combine. With `Prefer: count=exact`, `X-Total-Count` tells how many books the filters match.",
  querystring: listParametersSchema,
  headers: preferHeader,
  response: {
    200: answerSchema("BooksEnvelope", [Messages.booksRetrieved], listingHeaders),
    ...failures({
      ...common,
      400: [Messages.invalidInput, Messages.badRequest, Messages.searchTooBroad],
    }),
  },
};

export const getBookSchema = {
  ...book,
  operationId: "getBook",
  summary: "Read one book",
  description: "Answers the book with this id, and its version in `ETag`.",
  headers: ifNoneMatchHeader,
  response: {
    200: answerSchema("BookEnvelope", [Messages.bookRetrieved], bookHeaders),
    304: notModified,
    ...failures(withId),
  },
};

export const updateBookSchema = {
  ...book,
  operationId: "updateBook",
  summary: "Change some or all of a book's fields",
  description:
    "Applies the fields sent on top of the stored book; those left out keep their values. The book is looked up first: a missing book is 404 whatever the body. With `If-Match`, only while the book is at a version it names.",
  body: schemaRef("BookChanges"),
  headers: ifMatchHeader,
  response: {
    200: answerSchema("BookEnvelope", [Messages.bookUpdated], bookHeaders),
    ...failures({ ...withId, ...withBody, ...conditional, ...forbidden }),
  },
};

export const deleteBookSchema = {
  ...book,
  operationId: "deleteBook",
  summary: "Delete a book",
  description:
    "Deletes the book with this id; a later read of it is 404. Ids are never reused. With `If-Match`, only while the book is at a version it names.",
  headers: ifMatchHeader,
  response: {
    200: answerSchema("EmptyEnvelope", [Messages.bookDeleted]),
    ...failures({ ...withId, ...conditional, ...forbidden }),
  },
};
