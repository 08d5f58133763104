// book-catalogue accounts …: the administrators' account routes, through the API as an
// administrator (the built-in pair or an admin account), so the service's own rules hold:
// names, roles, hashing, and a reset or a disable ending the account's tokens at once.
import { parseArgs } from "node:util";
import { PASSWORD_MAX, PASSWORD_MIN } from "../accounts/schemas.js";
import {
  type Account,
  type AccountChanges,
  type BookCatalogueClient,
  CatalogueError,
  createClient,
  type Role,
} from "../client/client.js";
import { checkName } from "../rules/account.js";
import { ROLES } from "../store/accounts.js";
import { connection, connectionOptions } from "./connection.js";
import { InputError, UsageError } from "./errors.js";
import { readNewPassword } from "./new-password.js";
import { printLine, shown } from "./shown.js";

/** Each subcommand: the NAME and ROLE it takes, and what it does with them. */
const SUBCOMMANDS = {
  list: { takes: [] },
  add: { takes: ["NAME"] },
  role: { takes: ["NAME", "ROLE"] },
  password: { takes: ["NAME"] },
  disable: { takes: ["NAME"] },
  enable: { takes: ["NAME"] },
  remove: { takes: ["NAME"] },
} as const;
type Subcommand = keyof typeof SUBCOMMANDS;

export async function accountsCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...connectionOptions, role: { type: "string" } },
  });
  const [sub, ...rest] = positionals;
  if (sub === undefined || !(sub in SUBCOMMANDS)) {
    throw new UsageError(`accounts takes one of ${Object.keys(SUBCOMMANDS).join(", ")}`);
  }
  const { takes } = SUBCOMMANDS[sub as Subcommand];
  if (rest.length !== takes.length) {
    throw new UsageError(`accounts ${sub} takes ${takes.join(" ") || "nothing more"}`);
  }
  if (sub !== "add" && values.role !== undefined) {
    throw new UsageError("--role is for accounts add (accounts role NAME ROLE changes one)");
  }
  const client = createClient(connection(values));
  const [name = "", role] = rest;
  try {
    await run(client, sub as Subcommand, name, sub === "add" ? values.role : role);
  } catch (error) {
    if (!(error instanceof CatalogueError) || error.status !== 403) throw error;
    throw new Error(
      "the service answered 403: Forbidden (accounts are for administrators: --username)",
    );
  }
}

function run(client: BookCatalogueClient, sub: Subcommand, name: string, role?: string) {
  if (sub === "list") return listAccounts(client);
  if (sub === "add") return addAccount(client, name, roleOf(role, "--role ROLE"));
  if (sub === "remove") return removeAccount(client, name);
  return changeAccount(client, sub, name, role);
}

/** A role the service knows, else a usage error before anything is sent. */
function roleOf(value: string | undefined, what: string): Role {
  if (value === undefined) throw new UsageError(`accounts add needs ${what}`);
  if (!(ROLES as readonly string[]).includes(value)) {
    throw new UsageError(`"${value}" is not a role: ${ROLES.join(", ")}`);
  }
  return value as Role;
}

const say = (line: string) => printLine(line);

/**
 * The accounts, a line each. Where a name the rule refuses was kept (from before the rule, or
 * a backup's), every name is quoted, its invisible characters written out: none looks like
 * another, and none plays on the terminal.
 */
async function listAccounts(client: BookCatalogueClient) {
  const listed = await client.listAccounts();
  const quoted = listed.some((account) => checkName(account.name) !== undefined);
  const accounts = listed.map((account) => ({
    ...account,
    name: quoted ? shown(account.name) : account.name,
  }));
  if (accounts.length === 0) return say("no accounts (the built-in pair signs in as ever)");
  const width = Math.max(4, ...accounts.map((account) => account.name.length));
  say(`${"NAME".padEnd(width)}  ${"ROLE".padEnd(9)}  STATUS`);
  for (const { name, role, enabled } of accounts) {
    say(`${name.padEnd(width)}  ${role.padEnd(9)}  ${enabled ? "enabled" : "disabled"}`);
  }
}

async function removeAccount(client: BookCatalogueClient, name: string) {
  const { id } = await accountNamed(client, name);
  await client.deleteAccount(id).catch((error) => {
    throw unknownAccount(error, name);
  });
  say(`removed ${name}`);
}

/** A new name the service would refuse, said before anyone types a password for it. */
function checkNewName(name: string): void {
  const problem = checkName(name);
  if (problem === undefined) return;
  const why =
    problem.kind === "empty"
      ? "is empty"
      : problem.kind === "too-long"
        ? `is longer than ${problem.max} characters`
        : problem.kind === "spaces-at-ends"
          ? "begins or ends with a space"
          : "holds a control or invisible character";
  throw new InputError(`the name ${shown(name)} ${why}: nothing was changed`);
}

async function addAccount(client: BookCatalogueClient, name: string, role: Role) {
  checkNewName(name);
  const password = await readNewPassword(`Password for ${name}: `, PASSWORD_MIN, PASSWORD_MAX);
  try {
    await client.createAccount({ name, role, password });
  } catch (error) {
    throw refusedName(error, name);
  }
  say(`added ${name}, ${role}`);
}

/** The service's refusals of a new account's name, as one plain line; others as they are. */
function refusedName(error: unknown, name: string): unknown {
  if (!(error instanceof CatalogueError) || error.status !== 400) return error;
  if (error.reason === "name: taken by another account") {
    return new Error(`the name "${name}" is taken by another account`);
  }
  if (error.reason === "name: the built-in pair's") {
    return new Error(`"${name}" is the built-in pair's name (AUTH_USERNAME)`);
  }
  return error;
}

async function changeAccount(
  client: BookCatalogueClient,
  sub: "role" | "password" | "disable" | "enable",
  name: string,
  role: string | undefined,
) {
  // A role is checked before the service is asked; a password is asked for once the account
  // is known to exist, so no one types one for a misspelt name.
  const newRole = sub === "role" ? roleOf(role, "ROLE") : undefined;
  const { id } = await accountNamed(client, name);
  const changes: AccountChanges =
    sub === "role"
      ? { role: newRole as Role }
      : sub === "password"
        ? { password: await newPasswordFor(name) }
        : { enabled: sub === "enable" };
  const changed = await client.updateAccount(id, changes).catch((error) => {
    throw unknownAccount(error, name);
  });
  say(changedLine(sub, changed));
}

const newPasswordFor = (name: string) =>
  readNewPassword(`New password for ${name}: `, PASSWORD_MIN, PASSWORD_MAX);

function changedLine(sub: "role" | "password" | "disable" | "enable", account: Account) {
  if (sub === "role") return `${account.name} is now ${account.role}`;
  if (sub === "password") return `${account.name}'s password is reset: their tokens have ended`;
  if (sub === "disable") return `disabled ${account.name}: their tokens have ended`;
  return `enabled ${account.name}`;
}

/** The account of that name; an error naming it when there is none. */
async function accountNamed(client: BookCatalogueClient, name: string): Promise<Account> {
  const account = (await client.listAccounts()).find((candidate) => candidate.name === name);
  if (account === undefined) throw unknownAccount(undefined, name);
  return account;
}

/** No account of that name (or it went meanwhile: 404), as one plain line. */
function unknownAccount(error: unknown, name: string): unknown {
  const gone = error === undefined || (error instanceof CatalogueError && error.status === 404);
  return gone ? new Error(`there is no account named "${name}" (accounts list)`) : error;
}
