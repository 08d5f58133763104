// The account routes: managing accounts for administrators, and for anyone signed in, who they
// are and a change of their own password. Every one is behind the token.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { countAttempt, countSuccess } from "../auth/login.js";
import type { LoginLimiter } from "../auth/login-limiter.js";
import type { Passwords } from "../auth/passwords.js";
import { requireToken, type TokenCheck } from "../auth/require-token.js";
import { allow, tokensEndNow } from "../auth/signed-in.js";
import { parseBookId } from "../books/schemas.js";
import { Messages, respond } from "../http/envelope.js";
import { setReason } from "../http/reasons.js";
import type { AccountChanges, AccountStore, Role } from "../store/accounts.js";
import {
  changePasswordSchema,
  createAccountSchema,
  deleteAccountSchema,
  listAccountsSchema,
  signedInSchema,
  updateAccountSchema,
} from "./route-schemas.js";

export interface AccountRoutesOptions {
  accounts: AccountStore;
  tokenCheck: TokenCheck;
  limiter: LoginLimiter;
  isBuiltInName: (name: string) => boolean;
  passwords: Passwords;
  /**
   * The tokens of the account `id` ended here (disabled, removed, a new password): told before
   * the change is answered.
   */
  tokensEnded?: (id: number) => void;
}

type NewAccountBody = { name: string; role: Role; password: string; enabled?: boolean };
type ChangesBody = { role?: Role; enabled?: boolean; password?: string };
type WithId = { Params: { id: string } };
const invalidInput = { invalidBodyMessage: Messages.invalidInput };

/** 400 `Invalid input`, the reason in its header. */
function refuse(reply: FastifyReply, reason: string) {
  setReason(reply, reason);
  return respond(reply, 400, Messages.invalidInput);
}

/** What a change sets in the store: a new password or a disable ends the account's tokens. */
async function storedChanges(body: ChangesBody, passwords: Passwords): Promise<AccountChanges> {
  const changes: AccountChanges = {};
  if (body.role !== undefined) changes.role = body.role;
  if (body.enabled !== undefined) changes.enabled = body.enabled;
  if (body.password !== undefined) changes.passwordHash = await passwords.hash(body.password);
  if (body.password !== undefined || body.enabled === false)
    changes.tokensValidFrom = tokensEndNow();
  return changes;
}

export async function accountRoutes(app: FastifyInstance, options: AccountRoutesOptions) {
  const { accounts, isBuiltInName, passwords } = options;
  const admins = { onRequest: allow("admin"), config: invalidInput };
  // An id written otherwise than plainly names no account.
  const idOf = (request: FastifyRequest<WithId>) => parseBookId(request.params.id);
  app.addHook("onRequest", requireToken(options.tokenCheck));

  app.get("/accounts", { ...admins, schema: listAccountsSchema }, async (_request, reply) =>
    respond(reply, 200, Messages.accountsRetrieved, await accounts.list()),
  );

  app.post<{ Body: NewAccountBody }>(
    "/accounts",
    { ...admins, schema: createAccountSchema },
    async (request, reply) => {
      const { name, role, password, enabled } = request.body;
      if (isBuiltInName(name)) return refuse(reply, "name: the built-in pair's");
      const passwordHash = await passwords.hash(password);
      const account = { name, role, passwordHash, tokensValidFrom: 0, enabled };
      const created = await accounts.create(account);
      if (created === undefined) return refuse(reply, "name: taken by another account");
      return respond(reply, 201, Messages.accountCreated, created);
    },
  );

  app.patch<WithId & { Body: ChangesBody }>(
    "/accounts/:id",
    { ...admins, schema: updateAccountSchema },
    async (request, reply) => {
      const id = idOf(request);
      const exists = id !== undefined && (await accounts.get(id)) !== undefined;
      if (!exists) return respond(reply, 404, Messages.accountNotFound);
      const changes = await storedChanges(request.body, passwords);
      const updated = await accounts.update(id, changes);
      if (updated === undefined) return respond(reply, 404, Messages.accountNotFound);
      if (changes.tokensValidFrom !== undefined) options.tokensEnded?.(id);
      return respond(reply, 200, Messages.accountUpdated, updated);
    },
  );

  app.delete<WithId>(
    "/accounts/:id",
    { ...admins, schema: deleteAccountSchema },
    async (request, reply) => {
      const id = idOf(request);
      if (id === undefined || !(await accounts.remove(id))) {
        return respond(reply, 404, Messages.accountNotFound);
      }
      options.tokensEnded?.(id);
      return respond(reply, 200, Messages.accountDeleted);
    },
  );

  app.get("/accounts/me", { schema: signedInSchema }, async (request, reply) => {
    const { account, name, role } = request.signedIn;
    return respond(reply, 200, Messages.accountRetrieved, { id: account, name, role });
  });

  app.put<{ Body: { current: string; password: string } }>(
    "/accounts/me/password",
    { schema: changePasswordSchema, config: invalidInput },
    changeOwnPassword(options),
  );
}

/**
 * The signed-in account's new password, given its current one. A wrong current password counts
 * as a failed login of the account's name. The built-in pair's is AUTH_PASSWORD: 403.
 */
function changeOwnPassword({ accounts, limiter, passwords, tokensEnded }: AccountRoutesOptions) {
  return async (
    request: FastifyRequest<{ Body: { current: string; password: string } }>,
    reply: FastifyReply,
  ) => {
    const { account: id, name } = request.signedIn;
    if (id === null) return respond(reply, 403, Messages.forbidden);
    const wait = await countAttempt(limiter, request.ip, name);
    if (wait > 0) {
      reply.header("retry-after", String(wait));
      return respond(reply, 429, Messages.tooManyRequests);
    }
    const account = await accounts.get(id);
    if (!(await passwords.verify(request.body.current, account?.passwordHash))) {
      return refuse(reply, "current: not the account's password");
    }
    await countSuccess(limiter, request.ip, name);
    const changes = await storedChanges({ password: request.body.password }, passwords);
    await accounts.update(id, changes);
    tokensEnded?.(id);
    return respond(reply, 200, Messages.passwordChanged);
  };
}
