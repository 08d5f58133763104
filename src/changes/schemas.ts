// The change log's shapes on the wire: an entry, as GET /changes and a book's history send it.
import { CHANGE_OPS, type Change } from "../store/changes.js";

const bookOrNull = { anyOf: [{ $ref: "Book#" }, { type: "null" }] };

export const changeSchema = {
  type: "object",
  required: ["seq", "op", "id", "book", "before", "at", "by"],
  properties: {
    seq: {
      type: "integer",
      minimum: 1,
      description: "The entry's place in the log: it only grows. `since` resumes after it.",
    },
    op: { type: "string", enum: [...CHANGE_OPS], description: "What was done to the book" },
    id: { type: "integer", minimum: 1, description: "The book's id" },
    book: { ...bookOrNull, description: "The book after the change; null for a delete" },
    before: { ...bookOrNull, description: "The book before it; null for a create or a restore" },
    at: { type: "string", format: "date-time", description: "When it was committed (UTC)" },
    by: {
      anyOf: [
        {
          type: "object",
          required: ["name", "account"],
          properties: {
            name: { type: "string", description: "The account's name, or the built-in username" },
            account: {
              type: ["integer", "null"],
              description: "The account's id; null for the built-in pair",
            },
          },
        },
        { type: "null" },
      ],
      description: "Who made the change; null when no request did (a tool of the store's own)",
    },
  },
} as const;

/** An entry as it is sent: its time as an ISO 8601 string. */
export const wireChange = (change: Change) => ({
  ...change,
  at: new Date(change.at).toISOString(),
});
