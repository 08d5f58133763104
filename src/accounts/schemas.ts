// The accounts' JSON schemas (validation, serialisation and the API description alike).
import {
  NAME_MAX,
  NAME_PATTERN,
  PASSWORD_MAX,
  PASSWORD_MIN,
  PASSWORD_PATTERN,
} from "../rules/account.js";
import { ROLES } from "../store/accounts.js";

export { NAME_MAX, PASSWORD_MAX, PASSWORD_MIN };

const role = {
  type: "string",
  enum: [...ROLES],
  description:
    "`reader`: every read, listing and search. `librarian`: also adds, changes and deletes books. `admin`: also manages accounts.",
} as const;
const name = {
  type: "string",
  minLength: 1,
  maxLength: NAME_MAX,
  pattern: NAME_PATTERN,
  description: `1 to ${NAME_MAX} characters: no space at either end, no control or invisible character.`,
} as const;
const password = {
  type: "string",
  minLength: PASSWORD_MIN,
  maxLength: PASSWORD_MAX,
  pattern: PASSWORD_PATTERN,
  description: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters, no unpaired surrogate. Kept only as a scrypt hash.`,
} as const;

/** POST /accounts: all three, and `enabled` (true when absent). Unknown fields are ignored. */
export const newAccountSchema = {
  type: "object",
  required: ["name", "role", "password"],
  properties: {
    name,
    role,
    password,
    enabled: {
      type: "boolean",
      description: "false: added disabled, no login until enabled. Default true.",
    },
  },
} as const;

/** PATCH /accounts/{id}: any of them; a new password or a disable ends the account's tokens. */
export const accountChangesSchema = {
  type: "object",
  properties: {
    role,
    enabled: {
      type: "boolean",
      description: "false: no login, and its tokens end at once; true: it may log in again.",
    },
    password,
  },
} as const;

/** PUT /accounts/me/password: the current password, and the new one. */
export const passwordChangeSchema = {
  type: "object",
  required: ["current", "password"],
  properties: { current: { type: "string", maxLength: PASSWORD_MAX }, password },
} as const;

export const accountSchema = {
  type: "object",
  required: ["id", "name", "role", "enabled"],
  properties: {
    id: { type: "integer", minimum: 1, description: "The id its tokens carry in `kid`" },
    name: { type: "string" },
    role,
    enabled: { type: "boolean" },
  },
} as const;

export const signedInSchema = {
  type: "object",
  required: ["id", "name", "role"],
  properties: {
    id: {
      type: ["integer", "null"],
      description: "The account's id; null for the built-in pair (AUTH_USERNAME)",
    },
    name: { type: "string" },
    role,
  },
} as const;
