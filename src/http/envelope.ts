import type { FastifyReply } from "fastify";

/** Every message text a client can receive. The specification and decisions.md fix them. */
export const Messages = {
  tokenGenerated: "Token generated successfully",
  invalidRequestPayload: "Invalid request payload",
  invalidCredentials: "Invalid credentials",
  tokenNotGenerated: "Could not generate token",
  tokenRequired: "Authorization token required",
  invalidToken: "Invalid token",
  forbidden: "Forbidden",

  bookCreated: "Book created successfully",
  booksRetrieved: "Books retrieved successfully",
  bookRetrieved: "Book retrieved successfully",
  bookUpdated: "Book updated successfully",
  bookDeleted: "Book deleted successfully",
  invalidInput: "Invalid input",
  bookNotFound: "Book not found",
  bookChanged: "Book has changed",
  bookRestored: "Book restored successfully",
  bookExists: "Book exists",

  changesRetrieved: "Changes retrieved successfully",
  historyRetrieved: "History retrieved successfully",
  changesGone: "Changes no longer kept",

  accountsRetrieved: "Accounts retrieved successfully",
  accountRetrieved: "Account retrieved successfully",
  accountCreated: "Account created successfully",
  accountUpdated: "Account updated successfully",
  accountDeleted: "Account deleted successfully",
  passwordChanged: "Password changed successfully",
  accountNotFound: "Account not found",

  healthy: "OK",
  ready: "Ready",
  badRequest: "Bad request",
  notFound: "Not found",
  methodNotAllowed: "Method not allowed",
  payloadTooLarge: "Payload too large",
  requestTimeout: "Request timeout",
  headersTooLarge: "Request header fields too large",
  expectationFailed: "Expectation failed",
  tooManyRequests: "Too many requests",
  serviceUnavailable: "Service unavailable",
  searchTooBroad: "Search too broad: use longer words, more words, or a filter",
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
