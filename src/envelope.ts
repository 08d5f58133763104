import type { FastifyReply } from "fastify";

/** Every message text a client can receive. The specification and decisions.md fix them. */
export const Messages = {
  tokenGenerated: "Token generated successfully",
  invalidRequestPayload: "Invalid request payload",
  invalidCredentials: "Invalid credentials",
  tokenNotGenerated: "Could not generate token",
  tokenRequired: "Authorization token required",
  invalidToken: "Invalid token",

  bookCreated: "Book created successfully",
  booksRetrieved: "Books retrieved successfully",
  bookRetrieved: "Book retrieved successfully",
  bookUpdated: "Book updated successfully",
  bookDeleted: "Book deleted successfully",
  invalidInput: "Invalid input",
  bookNotFound: "Book not found",

  healthy: "OK",
  ready: "Ready",
  badRequest: "Bad request",
  notFound: "Not found",
  methodNotAllowed: "Method not allowed",
  payloadTooLarge: "Payload too large",
  requestTimeout: "Request timeout",
  headersTooLarge: "Request header fields too large",
  tooManyRequests: "Too many requests",
  serviceUnavailable: "Service unavailable",
  internalError: "Internal server error",
} as const;

export interface Envelope<T = unknown> {
  status: number;
  message: string;
  data: T | null;
}

/** Sends `{status, message, data}` with `status` equal to the HTTP status. */
export function respond(
  reply: FastifyReply,
  status: number,
  message: string,
  data: unknown = null,
): FastifyReply {
  return reply.code(status).send({ status, message, data } satisfies Envelope);
}

/** The envelope as a JSON Schema, for response schemas and the API description. */
function envelopeSchema(data: object) {
  return {
    type: "object",
    required: ["status", "message", "data"],
    properties: {
      status: { type: "integer" },
      message: { type: "string" },
      data,
    },
  } as const;
}

/** An answer's schema that names the messages it may carry, for the API description. */
export function answerSchema(data: object, ...messages: string[]) {
  const schema = envelopeSchema(data);
  return {
    ...schema,
    description: messages.join(" | "),
    properties: { ...schema.properties, message: { type: "string", enum: messages } },
  };
}

/** The failure answers a route may give, by status, each with its possible messages. */
export function failures(byStatus: Record<number, string[]>) {
  return Object.fromEntries(
    Object.entries(byStatus).map(([status, messages]) => [
      status,
      answerSchema({ type: "null" }, ...messages),
    ]),
  );
}
