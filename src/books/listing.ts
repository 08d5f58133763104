// GET /books parameters: their schema (validation and the API description alike), how they
// are read from the query string, and the listing a valid query names.

import { AUTHOR_MAX, TITLE_MAX, YEAR_MAX, YEAR_MIN } from "../rules/book.js";
import { MIN_PREFIX, searchTerms } from "../rules/search.js";
import type { BookFilters, BookQuery, SortField } from "../store/store.js";
import { SORT_FIELDS } from "../store/store.js";
import { MAX_ID, textSchema } from "./schemas.js";

/** GET /books query parameters once read; all optional. */
export interface ListParameters {
  limit?: number;
  after?: number;
  q?: string;
  author?: string;
  year?: number;
  sort?: string;
  after_key?: string;
}
/** What a listing selects and from where, in which order: a store query without its page size. */
export type ListingQuery = Omit<BookQuery, "limit">;

const SORTS = SORT_FIELDS.flatMap((field) => [field, `-${field}`]);
const FIELD_SORTS = SORTS.filter((sort) => !/^-?id$/.test(sort));

const YEAR = /^-?(0|[1-9][0-9]{0,3})$/;

// The cursor's rules span several parameters, which OpenAPI parameters cannot express one by
// one: each description states them, and readListingQuery enforces them.
export const listParametersSchema = {
  type: "object",
  properties: {
    limit: {
      type: "integer",
      minimum: 1,
      maximum: 1000,
      description:
        "One page of at most this many books. While more remain, the `Link` header names the next page (its `after`, and `after_key` when sorted by a field). Without `limit`, every book.",
    },
    after: {
      type: "integer",
      minimum: 0,
      maximum: MAX_ID,
      description:
        "Where the page starts: after the book with this id, the last of the previous page (0: the first page). Sorted by title, author or year, an `after` above 0 needs `after_key`. Best taken from the `Link` header.",
    },
    after_key: {
      ...textSchema(TITLE_MAX),
      description: `Only with \`sort\` by a field (${FIELD_SORTS.join(", ")}) and an \`after\` above 0, and then required: the title, author or year of the book \`after\` names (for a year, an integer from ${YEAR_MIN} to ${YEAR_MAX}). Best taken from the \`Link\` header.`,
    },
    sort: {
      type: "string",
      enum: SORTS,
      description:
        "The order: `id` (the default), `title`, `author` or `year`, then the id; a leading `-` reverses it. Titles and authors sort without regard to case or accents (Å with A, ß as ss), each script in Unicode order, the same on every store.",
    },
    q: {
      ...textSchema(200),
      description:
        `Words, each the start of a word of the title or the author: all of them, in any order, ` +
        `without regard to case or accents, in every script (\`tolk\` finds Tolkien, \`garcia\` ` +
        `García Márquez). Anything but a letter or a digit separates words; a word shorter ` +
        `than ${MIN_PREFIX} characters matches whole words only. In scripts written without ` +
        `spaces (Han, Hiragana, Katakana, Hangul, Thai) a word matches anywhere inside ` +
        `(\`春樹\` finds 村上春樹). A \`q\` with no letter or digit (\`*\`), like an empty one, is ` +
        `400 \`Invalid input\`. A search that matches very many books may answer a page with ` +
        `fewer books than \`limit\`, with a \`Link\` to go on.`,
    },
    author: { ...textSchema(AUTHOR_MAX), description: "Only books by this author, exactly" },
    year: {
      type: "integer",
      minimum: YEAR_MIN,
      maximum: YEAR_MAX,
      description: "Only books of this year",
    },
  },
} as const;

// How each integer parameter must be written: plainly, no sign (but a year's minus), no
// leading zero, no exponent or fraction. Anything else stays a string and fails validation.
const INTEGER_PARAMETERS: Record<string, RegExp> = {
  limit: /^(0|[1-9][0-9]*)$/,
  after: /^(0|[1-9][0-9]*)$/,
  since: /^(0|[1-9][0-9]*)$/,
  year: /^-?(0|[1-9][0-9]*)$/,
};

/**
 * Turns the integer parameters written plainly into numbers, so the schema can say `integer`
 * while `01`, `1e3`, `+1` and `1.0` are still refused. Out-of-range values become numbers the
 * schema then refuses; a parameter given twice stays an array and is refused too.
 */
export function readIntegerParameters(query: Record<string, unknown>): void {
  for (const [name, written] of Object.entries(INTEGER_PARAMETERS)) {
    const raw = query[name];
    // `+ 0` turns a year of -0 into 0.
    if (typeof raw === "string" && written.test(raw)) query[name] = Number(raw) + 0;
  }
}

/** Why a query string that passed the schema names no listing: the parameter and its rule. */
export interface ListingRefusal {
  reason: string;
}

/**
 * The listing a valid query string names: its cursor, order and filters; a refusal when the
 * cursor does not fit the order (a sort by a field continues from `after` with its
 * `after_key`, and only then takes one).
 */
export function readListingQuery(parameters: ListParameters): ListingQuery | ListingRefusal {
  const after = parameters.after ?? 0;
  const sort = (parameters.sort?.replace(/^-/, "") ?? "id") as SortField;
  const key = parameters.after_key;
  const keyed = sort !== "id" && after !== 0;
  if (keyed && key === undefined) {
    return { reason: "after_key: required with after above 0 and a sort by a field" };
  }
  if (!keyed && key !== undefined) {
    return { reason: "after_key: only with after above 0 and a sort by a field" };
  }
  // A q with no letter or digit has no word to look for: refused, as an empty q is.
  if (parameters.q !== undefined && searchTerms(parameters.q).length === 0) {
    return { reason: "q: at least one letter or digit" };
  }
  const query: ListingQuery = {
    after,
    sort,
    descending: parameters.sort?.startsWith("-") === true,
  };
  if (key !== undefined) {
    if (sort !== "year") query.afterKey = key;
    else if (YEAR.test(key)) query.afterKey = Number(key);
    else return { reason: `after_key: a year, a whole number from ${YEAR_MIN} to ${YEAR_MAX}` };
  }
  return { ...query, ...matchFilters(parameters) };
}

/** The filters that choose which books match, whatever the page: what a total counts. */
export function matchFilters(parameters: ListParameters): BookFilters {
  const filters: BookFilters = {};
  const terms = parameters.q === undefined ? [] : searchTerms(parameters.q);
  if (terms.length > 0) filters.search = terms;
  if (parameters.author !== undefined) filters.author = parameters.author;
  if (parameters.year !== undefined) filters.year = parameters.year;
  return filters;
}
