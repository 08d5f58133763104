// What each change-log route declares: its parameters and answers.

import { bookHeaders, idParams } from "../books/route-schemas.js";
import { TOKEN_SECURITY } from "../http/docs.js";
import { Messages } from "../http/envelope.js";
import { answerSchema, failures, ROUTED_ANSWER_HEADERS } from "../http/openapi.js";

/** Entries a page holds unless `limit` says otherwise, and at most. */
export const DEFAULT_CHANGES_LIMIT = 100;
export const MAX_CHANGES_LIMIT = 1000;

const since = {
  type: "integer",
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description:
    "The entries after this sequence (0: from the first; 410 once the log has been trimmed). Best taken from the `Link` header, or the last entry's `seq`.",
} as const;

const limit = {
  type: "integer",
  minimum: 1,
  maximum: MAX_CHANGES_LIMIT,
  description: `At most this many entries (${DEFAULT_CHANGES_LIMIT} unless given).`,
} as const;

export const historyQuerySchema = { type: "object", properties: { since, limit } } as const;

export const changesQuerySchema = {
  type: "object",
  properties: {
    since: {
      anyOf: [
        { ...since, description: undefined },
        { type: "string", const: "now" },
      ],
      description: `${since.description} \`now\`: from the newest, so that only what comes next is given (its \`Link\` names the newest sequence).`,
    },
    limit,
  },
} as const;

const common = {
  401: [Messages.tokenRequired, Messages.invalidToken],
  500: [Messages.internalError],
  503: [Messages.serviceUnavailable],
};
const readers = { ...common, 400: [Messages.invalidInput] };
const changes = { tags: ["changes"], security: TOKEN_SECURITY };

const nextHeader = {
  link: {
    type: "string" as const,
    description:
      '`</changes?since=…&limit=…>; rel="next"`: where to go on from, the last entry sent (or `since` again, when none was). Asked again later, it gives what has changed since.',
  },
};

export const listChangesSchema = {
  ...changes,
  operationId: "listChanges",
  summary: "The changes after a sequence",
  description:
    "Every create, update, delete and restore of a book after `since`, in the order they were committed, with who made it, when, and the book before and after. Any role may read it. Entries are kept for a while (CHANGES_KEEP_DAYS, CHANGES_KEEP): a `since` before what is kept is 410 `Changes no longer kept`, and the client reads the catalogue again; so is a `since` past the newest sequence, which this catalogue never gave (another's, say, restored from its backup).",
  querystring: changesQuerySchema,
  response: {
    200: answerSchema("ChangesEnvelope", [Messages.changesRetrieved], {
      ...ROUTED_ANSWER_HEADERS,
      ...nextHeader,
    }),
    ...failures({ ...readers, 410: [Messages.changesGone] }),
  },
};

export const bookHistorySchema = {
  ...changes,
  operationId: "bookHistory",
  summary: "A book's history",
  description:
    "The kept entries of one book, deleted or not, in order: who changed it, when, and how. 404 `Book not found` for a book that does not exist and has no entry kept.",
  params: idParams,
  querystring: historyQuerySchema,
  response: {
    200: answerSchema("ChangesEnvelope", [Messages.historyRetrieved]),
    ...failures({ ...readers, 404: [Messages.bookNotFound] }),
  },
};

export const restoreBookSchema = {
  ...changes,
  operationId: "restoreBook",
  summary: "Bring a deleted book back",
  description:
    "Undoes a delete: the book comes back with its id and the values it had. 409 `Book exists` when it is not deleted; 404 `Book not found` for an id no kept entry names. For librarians and administrators.",
  params: idParams,
  response: {
    201: answerSchema("BookEnvelope", [Messages.bookRestored], bookHeaders),
    ...failures({
      ...common,
      400: [Messages.badRequest],
      403: [Messages.forbidden],
      404: [Messages.bookNotFound],
      409: [Messages.bookExists],
    }),
  },
};
