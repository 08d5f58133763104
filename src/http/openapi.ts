import type { FastifyInstance } from "fastify";
import {
  accountChangesSchema,
  accountSchema,
  newAccountSchema,
  passwordChangeSchema,
  signedInSchema,
} from "../accounts/schemas.js";
import { bookChangesSchema, bookSchema, newBookSchema } from "../books/schemas.js";
import { changeSchema } from "../changes/schemas.js";
import { Messages } from "./envelope.js";
import { REASON_HEADER } from "./reasons.js";

/**
 * The named schemas of the API description. Routes refer to them as `{ $ref: "Book#" }`, so
 * validation, serialisation and the published `components.schemas` are one definition.
 */
export type SchemaName =
  | "Book"
  | "NewBook"
  | "BookChanges"
  | "Credentials"
  | "BookEnvelope"
  | "BooksEnvelope"
  | "TokenEnvelope"
  | "EmptyEnvelope"
  | "HealthEnvelope"
  | "Account"
  | "NewAccount"
  | "AccountChanges"
  | "PasswordChange"
  | "SignedIn"
  | "AccountEnvelope"
  | "AccountsEnvelope"
  | "SignedInEnvelope"
  | "Change"
  | "ChangesEnvelope";

export const schemaRef = (name: SchemaName) => ({ $ref: `${name}#` }) as const;

const EXAMPLE_BOOK = {
  id: 1,
  title: "The Left Hand of Darkness",
  author: "Ursula K. Le Guin",
  year: 1969,
};

/** The envelope every answer uses, with `data` as given. */
function envelope(name: SchemaName, description: string, data: object) {
  return {
    $id: name,
    type: "object",
    description,
    required: ["status", "message", "data"],
    properties: {
      status: { type: "integer", minimum: 100, maximum: 599, description: "The HTTP status" },
      message: { type: "string", description: "What happened, in the contract's exact words" },
      data,
    },
  };
}

const schemas = (credentialsExample: object) => [
  {
    $id: "Book",
    ...bookSchema,
    description: "A book of the catalogue; the service assigns its id.",
    properties: {
      ...bookSchema.properties,
      id: {
        type: "integer",
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: "Assigned by the service; never reused after a delete",
      },
    },
    examples: [EXAMPLE_BOOK],
  },
  {
    $id: "NewBook",
    ...newBookSchema,
    description: "A book to add: all three fields. Unknown fields, `id` among them, are ignored.",
    examples: [{ title: EXAMPLE_BOOK.title, author: EXAMPLE_BOOK.author, year: 1969 }],
  },
  {
    $id: "BookChanges",
    ...bookChangesSchema,
    description:
      "Any of a book's fields; those left out keep their values, and `{}` changes nothing.",
    examples: [{ year: 1970 }],
  },
  {
    $id: "Credentials",
    type: "object",
    required: ["username", "password"],
    properties: { username: { type: "string" }, password: { type: "string" } },
    description: "The service's built-in username and password, or an account's name and password.",
    examples: [credentialsExample],
  },
  envelope("BookEnvelope", "An answer carrying one book.", { $ref: "Book#" }),
  envelope("BooksEnvelope", "An answer carrying a list of books.", {
    type: "array",
    items: { $ref: "Book#" },
  }),
  envelope("TokenEnvelope", "An answer carrying a token.", {
    type: "object",
    required: ["token"],
    properties: {
      token: { type: "string", description: "A JSON Web Token (HS256) valid for 15 minutes" },
    },
  }),
  envelope("EmptyEnvelope", "An answer with no data: every failure, and some successes.", {
    type: "null",
  }),
  envelope("HealthEnvelope", "The process answers, and which version it runs.", {
    type: "object",
    required: ["version"],
    properties: {
      version: { type: "string", description: "The service's version (semantic versioning)" },
    },
  }),
  ...accountSchemas,
  ...changeSchemas,
];

const EXAMPLE_ACCOUNT = { id: 3, name: "Ines", role: "librarian", enabled: true };

const accountSchemas = [
  {
    $id: "Account",
    ...accountSchema,
    description: "An account; never its password or its hash.",
    examples: [EXAMPLE_ACCOUNT],
  },
  {
    $id: "NewAccount",
    ...newAccountSchema,
    description: "An account to add. Its name may not be the built-in pair's, nor another's.",
    examples: [{ name: "Ines", role: "librarian", password: "a long passphrase" }],
  },
  {
    $id: "AccountChanges",
    ...accountChangesSchema,
    description: "Any of an account's role, state and password; `{}` changes nothing.",
    examples: [{ enabled: false }],
  },
  {
    $id: "PasswordChange",
    ...passwordChangeSchema,
    description: "The account's current password, and the new one.",
  },
  {
    $id: "SignedIn",
    ...signedInSchema,
    description: "Who the token signs in, and their role.",
    examples: [{ id: null, name: "admin", role: "admin" }],
  },
  envelope("AccountEnvelope", "An answer carrying one account.", { $ref: "Account#" }),
  envelope("AccountsEnvelope", "An answer carrying every account.", {
    type: "array",
    items: { $ref: "Account#" },
  }),
  envelope("SignedInEnvelope", "An answer saying who the token signs in.", {
    $ref: "SignedIn#",
  }),
];

const changeSchemas = [
  {
    $id: "Change",
    ...changeSchema,
    description: "One entry of the change log: one create, update, delete or restore of a book.",
    examples: [
      {
        seq: 42,
        op: "update",
        id: 1,
        book: { ...EXAMPLE_BOOK, year: 1970 },
        before: EXAMPLE_BOOK,
        at: "2026-11-28T09:30:00.000Z",
        by: { name: "Ines", account: 3 },
      },
    ],
  },
  envelope("ChangesEnvelope", "An answer carrying entries of the change log, in order.", {
    type: "array",
    items: { $ref: "Change#" },
  }),
];

/** Adds the named schemas; the docs page fills in the credentials example when signing in. */
export function registerSchemas(app: FastifyInstance, credentialsExample: object): void {
  for (const schema of schemas(credentialsExample)) app.addSchema(schema);
}

/** Header schemas as routes declare them; @fastify/swagger turns them into Header Objects. */
type Headers = Record<string, { type: "string" | "integer"; description: string }>;

/** Sent on every answer, also those given before any route (408, 417, 431, 400). */
const NOSNIFF_HEADER: Headers = {
  "x-content-type-options": {
    type: "string",
    description: "Always `nosniff`: the answer is what its Content-Type says.",
  },
};

/** Sent on every answer the service routes (not on a 408, 417, 431 or 400 before any route). */
export const ROUTED_ANSWER_HEADERS: Headers = {
  "x-request-id": {
    type: "string",
    description:
      "The request's id: the caller's own X-Request-Id when it is 1 to 128 characters of `[A-Za-z0-9._:-]`, else a new UUID. Log lines about the request carry it.",
  },
  "cache-control": {
    type: "string",
    description: "Always `no-store`: no cache keeps a token or a page of the catalogue.",
  },
  ...NOSNIFF_HEADER,
};

/** On a 400 `Invalid input` or `Invalid request payload`: why, while the envelope stays bare. */
const REASON_HEADERS: Headers = {
  [REASON_HEADER]: {
    type: "string",
    description:
      "Why the request was refused: the field or parameter, a colon, the rule it broke (`title: at most 500 characters`, `limit: a whole number from 1 to 1000`, `body: not valid JSON`; on a `Bad request` for raw non-ASCII bytes in the URL, `URL: characters outside printable ASCII must be percent-encoded`). Printable ASCII, at most 200 characters, never the value sent. Meant for people: the wording may change.",
  },
};

const RETRY_AFTER_HEADER: Headers = {
  "retry-after": {
    type: "integer",
    description:
      "Seconds to wait before trying again: after too many failed logins (429), and while the store is unavailable or slow, or has no space for a write (503)",
  },
};

/** An answer's schema: the named envelope, narrowed to the messages this answer may carry. */
export function answerSchema(
  envelope: SchemaName,
  messages: string[],
  headers: Headers = ROUTED_ANSWER_HEADERS,
) {
  return {
    description: messages.join(" | "),
    headers,
    allOf: [{ $ref: `${envelope}#` }, { properties: { message: { enum: messages } } }],
  };
}

/**
 * The failure answers a route may give, by status, each with its possible messages. Every
 * route may also get 408, 417 and 431: they are answered before any route runs.
 */
export function failures(byStatus: Record<number, string[]>) {
  const all: Record<number, string[]> = {
    ...byStatus,
    408: [Messages.requestTimeout],
    417: [Messages.expectationFailed],
    431: [Messages.headersTooLarge],
  };
  return Object.fromEntries(
    Object.entries(all).map(([status, messages]) => {
      return [status, answerSchema("EmptyEnvelope", messages, failureHeaders(status))];
    }),
  );
}

/** On a 410 `Changes no longer kept`: what is kept, and where to go on once the catalogue is read. */
const CHANGES_GONE_HEADERS: Headers = {
  "changes-oldest-kept": {
    type: "integer",
    description: "The oldest sequence still kept: `since` may be one less, no lower.",
  },
  link: {
    type: "string",
    description:
      '`</changes?since=…>; rel="next"`: the newest sequence now. Read the catalogue again (GET /books), then follow the changes from there; an entry already seen in the catalogue does no harm, as each carries the whole book.',
  },
};

function failureHeaders(status: string): Headers {
  if (status === "429" || status === "503")
    return { ...ROUTED_ANSWER_HEADERS, ...RETRY_AFTER_HEADER };
  if (status === "400") return { ...ROUTED_ANSWER_HEADERS, ...REASON_HEADERS };
  if (status === "410") return { ...ROUTED_ANSWER_HEADERS, ...CHANGES_GONE_HEADERS };
  if (status === "408" || status === "417" || status === "431") return NOSNIFF_HEADER;
  return ROUTED_ANSWER_HEADERS;
}

const headerObjects = (headers: Headers) =>
  Object.fromEntries(
    Object.entries(headers).map(([name, { description, ...schema }]) => [
      name,
      { description, schema },
    ]),
  );

const emptyAnswer = (description: string, headers: Headers) => ({
  description,
  headers: headerObjects({ ...ROUTED_ANSWER_HEADERS, ...headers }),
  content: { "application/json": { schema: { $ref: "#/components/schemas/EmptyEnvelope" } } },
});

/**
 * Answers outside every documented operation: a path the service does not know, or a method a
 * known path does not take. No operation can give them, so none refers to them; they are here
 * for their shape and headers (hence the unused-component rules off in the lint rulesets).
 */
export const UNROUTED_RESPONSES = {
  NotFound: emptyAnswer(`${Messages.notFound}: no route has this path.`, {}),
  MethodNotAllowed: emptyAnswer(
    `${Messages.methodNotAllowed}: the path is known, the method is not.`,
    { allow: { type: "string", description: "The methods this path takes" } },
  ),
};

/** Headers sent on every answer that lists them: a generated client types them as present. */
const ALWAYS_SENT = new Set(["x-request-id", "cache-control", "x-content-type-options", "etag"]);

interface ResponseObject {
  description: string;
  headers?: Record<string, { description?: string; required?: boolean; schema: object }>;
  content?: object;
}
interface OperationObject {
  operationId?: string;
  summary?: string;
  description?: string;
  responses: Record<string, ResponseObject>;
}
interface DocumentObject {
  paths?: Record<string, Record<string, OperationObject>>;
  components?: { responses?: Record<string, ResponseObject> };
}

/**
 * What the generator cannot say from the route schemas: the headers always sent are
 * `required`, and each HEAD (served wherever GET is) is described as its GET without a body.
 */
export function completeDocument<T>(document: T): T {
  const { paths = {}, components } = document as DocumentObject;
  for (const operations of Object.values(paths)) {
    const { get, head } = operations;
    if (get && head) describeHead(head, get);
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses)) markAlwaysSent(response);
    }
  }
  for (const response of Object.values(components?.responses ?? {})) markAlwaysSent(response);
  return document;
}

function markAlwaysSent(response: ResponseObject): void {
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    if (ALWAYS_SENT.has(name)) header.required = true;
  }
}

/** A HEAD: the GET's statuses and headers, no body; `getBook` becomes `getBookHead`. */
function describeHead(head: OperationObject, get: OperationObject): void {
  if (get.operationId !== undefined) head.operationId = `${get.operationId}Head`;
  head.summary = `${get.summary ?? "The same as GET"}: headers only`;
  head.description =
    `As \`GET\` with the same parameters: the same status and headers, and no body. ${get.description ?? ""}`.trim();
  for (const response of Object.values(head.responses)) delete response.content;
}
