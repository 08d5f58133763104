// Why a request was refused with 400, in the Problem-Reason header: the envelope stays the
// contract's exactly, and the header names the field or parameter and the rule it broke. Only
// refusals reach this module: a request that is answered 2xx pays nothing for it.
import type { FastifyReply, FastifyRequest, FastifySchemaValidationError } from "fastify";
import { NAME_PATTERN, PASSWORD_PATTERN } from "../rules/account.js";
import { TEXT_PATTERN } from "../rules/book.js";
import { bodyProblem } from "./body-parser.js";

/** The response header that carries the reason of a 400. */
export const REASON_HEADER = "problem-reason";
/** A reason is a short line: the name, a colon, the rule. */
const MAX_REASON_LENGTH = 200;

/** What a pattern of the schemas asks, in words; a pattern not listed is "not in the expected form". */
const PATTERN_RULES: Record<string, string> = {
  [TEXT_PATTERN]: "not only spaces, and no NUL character or unpaired surrogate",
  [PASSWORD_PATTERN]: "no unpaired surrogate",
  [NAME_PATTERN]: "no space at either end, no control or invisible character",
};

/** Sets the reason header, made safe for a header: printable ASCII, the rest percent-encoded. */
export function setReason(reply: FastifyReply, reason: string): void {
  const safe = reason.replace(/[^\x20-\x7e]/gu, (c) => encodeURIComponent(c));
  reply.header(REASON_HEADER, safe.slice(0, MAX_REASON_LENGTH));
}

/** The reason for a failed validation of the request's body, query string, params or headers. */
export function validationReason(
  request: FastifyRequest,
  errors: FastifySchemaValidationError[],
  context: string | undefined,
): string {
  if (context === "body") {
    if (request.body === undefined) return "body: empty; send a JSON object";
    const problem = bodyProblem(request.body);
    if (problem !== undefined) return problem;
  }
  const error = errors[0];
  if (error === undefined) return `${context ?? "request"}: not valid`;
  const name = nameOf(error, context);
  return `${name}: ${ruleOf(error)}`;
}

/** The field or parameter an error is about: `title`, `limit`, or the body as a whole. */
function nameOf(error: FastifySchemaValidationError, context: string | undefined): string {
  const missing = error.params.missingProperty;
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (typeof missing === "string") path.push(missing);
  if (path.length > 0) return path.join(".");
  return context === "querystring" ? "query" : (context ?? "request");
}

/** The rule an error says was broken, in words, from the failing keyword and its schema. */
function ruleOf(error: FastifySchemaValidationError): string {
  const schema = (error as { parentSchema?: Record<string, unknown> }).parentSchema ?? {};
  const { params } = error;
  if (schema.type === "integer" || schema.type === "number") return numberRule(schema);
  switch (error.keyword) {
    case "required":
      return "required";
    case "type":
      return `must be ${typeName(params.type)}`;
    case "maxLength":
      return `at most ${params.limit} characters`;
    case "minLength":
      return params.limit === 1 ? "must not be empty" : `at least ${params.limit} characters`;
    case "pattern":
      return PATTERN_RULES[String(params.pattern)] ?? "not in the expected form";
    case "enum":
      return `one of ${(params.allowedValues as unknown[]).join(", ")}`;
    default:
      return "not valid";
  }
}

/** An integer's whole rule, whichever part of it failed: `a whole number from 1 to 1000`. */
function numberRule(schema: Record<string, unknown>): string {
  const kind = schema.type === "integer" ? "a whole number" : "a number";
  const { minimum: min, maximum: max } = schema;
  if (min !== undefined && max !== undefined) return `${kind} from ${min} to ${max}`;
  if (min !== undefined) return `${kind}, at least ${min}`;
  if (max !== undefined) return `${kind}, at most ${max}`;
  return kind;
}

function typeName(type: unknown): string {
  switch (type) {
    case "object":
      return "a JSON object";
    case "string":
      return "a string";
    case "array":
      return "a list";
    default:
      return String(type);
  }
}
