// What each account route declares: its parameters, body and answers.
import { TOKEN_SECURITY } from "../http/docs.js";
import { Messages } from "../http/envelope.js";
import { answerSchema, failures, schemaRef } from "../http/openapi.js";

const idParams = {
  type: "object",
  required: ["id"],
  properties: {
    id: {
      type: "string",
      description:
        "The account's id, written plainly. Any other id, like an id no account has, is 404 `Account not found`.",
    },
  },
} as const;

const common = {
  401: [Messages.tokenRequired, Messages.invalidToken],
  403: [Messages.forbidden],
  500: [Messages.internalError],
  503: [Messages.serviceUnavailable],
};
const { 403: _, ...anyone } = common;
const withBody = {
  ...common,
  400: [Messages.invalidInput, Messages.badRequest],
  413: [Messages.payloadTooLarge],
};
const withId = { ...common, 404: [Messages.accountNotFound] };
const accounts = { tags: ["accounts"], security: TOKEN_SECURITY };
const forAdmins = "For administrators: any other role gets 403 `Forbidden`.";

export const listAccountsSchema = {
  ...accounts,
  operationId: "listAccounts",
  summary: "List the accounts",
  description: `Every account, by id; never a password or its hash. ${forAdmins}`,
  response: {
    200: answerSchema("AccountsEnvelope", [Messages.accountsRetrieved]),
    ...failures(common),
  },
};

export const createAccountSchema = {
  ...accounts,
  operationId: "createAccount",
  summary: "Add an account",
  description: `Adds an account with a name, a role and a password. A name already taken, or the built-in pair's, is 400 \`Invalid input\`. ${forAdmins}`,
  body: schemaRef("NewAccount"),
  response: {
    201: answerSchema("AccountEnvelope", [Messages.accountCreated]),
    ...failures(withBody),
  },
};

export const updateAccountSchema = {
  ...accounts,
  operationId: "updateAccount",
  summary: "Change an account's role, reset its password, disable or enable it",
  description: `Sets the fields sent. A new password, or \`enabled: false\`, ends every token the account holds at once; a new role holds from its next request. ${forAdmins}`,
  params: idParams,
  body: schemaRef("AccountChanges"),
  response: {
    200: answerSchema("AccountEnvelope", [Messages.accountUpdated]),
    ...failures({ ...withId, ...withBody }),
  },
};

export const deleteAccountSchema = {
  ...accounts,
  operationId: "deleteAccount",
  summary: "Remove an account",
  description: `Removes the account; its tokens end at once. ${forAdmins}`,
  params: idParams,
  response: {
    200: answerSchema("EmptyEnvelope", [Messages.accountDeleted]),
    ...failures({ ...withId, 400: [Messages.badRequest] }),
  },
};

export const signedInSchema = {
  ...accounts,
  operationId: "getSignedIn",
  summary: "Who the token signs in",
  description: "The account, or the built-in pair (id null, an administrator), and its role.",
  response: {
    200: answerSchema("SignedInEnvelope", [Messages.accountRetrieved]),
    ...failures(anyone),
  },
};

export const changePasswordSchema = {
  ...accounts,
  operationId: "changeOwnPassword",
  summary: "Change the signed-in account's own password",
  description:
    "Given its current password: a wrong one is 400 `Invalid input` (and counts as a failed login). Every token of the account ends, this one too: log in again with the new password. The built-in pair's password is AUTH_PASSWORD, set where the service runs: 403 `Forbidden`.",
  body: schemaRef("PasswordChange"),
  response: {
    200: answerSchema("EmptyEnvelope", [Messages.passwordChanged]),
    ...failures({ ...withBody, 429: [Messages.tooManyRequests] }),
  },
};
