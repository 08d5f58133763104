// The address follows the page shown (`?q=…&sort=…&after=…&after_key=…`), and the pages
// walked are kept in the browser's history entry: Back, Forward and reload keep them.

import { searchTerms } from "@book-catalogue/rules/search.js";
import type { ListQuery, SortOrder } from "book-catalogue";
import { useEffect, useRef } from "preact/hooks";
import { DEFAULT_SORT, PAGE_SIZE, SORTS } from "./query.js";

/** The pages walked, kept in the browser's history entry. */
export interface Walk {
  trail: ListQuery[];
  shownBefore: number[];
  /** The number of the trail's first page: 1, unless the walk jumped (to the last page, say). */
  firstPage?: number;
}

/**
 * The query the address names: `?q=…&sort=…&after=…&after_key=…`. An order the page does not
 * offer is its default; a search with no letter or digit, none (as in the search bar). A
 * cursor the service refuses is dropped once refused (use-listing.ts).
 */
function queryOfAddress(): ListQuery {
  const parameters = new URLSearchParams(location.search);
  const sort = parameters.get("sort") as SortOrder | null;
  const typed = parameters.get("q")?.trim();
  const q = typed && searchTerms(typed).length > 0 ? typed : undefined;
  const query: ListQuery = {
    limit: PAGE_SIZE,
    sort: sort !== null && SORTS.includes(sort) ? sort : DEFAULT_SORT,
    ...(q ? { q } : {}),
  };
  const after = Number(parameters.get("after"));
  if (Number.isSafeInteger(after) && after > 0) {
    query.after = after;
    const key = parameters.get("after_key");
    if (key !== null) query.afterKey = key;
  }
  return query;
}

function addressOf(query: ListQuery): string {
  const parameters = new URLSearchParams();
  if (query.q) parameters.set("q", query.q);
  if (query.sort && query.sort !== DEFAULT_SORT) parameters.set("sort", query.sort);
  if (query.after !== undefined) parameters.set("after", String(query.after));
  if (query.afterKey !== undefined) parameters.set("after_key", String(query.afterKey));
  return parameters.size > 0 ? `?${parameters}` : location.pathname;
}

/** The walk of this history entry (a reload, Back or Forward), else the address's one page. */
export function currentWalk(): Walk {
  const kept = history.state as Walk | null;
  if (kept?.trail?.length) return kept;
  return { trail: [queryOfAddress()], shownBefore: [0] };
}

/**
 * Keeps the address and the history entry on the walk: a new entry for each step, so Back
 * goes back. Back and Forward hand the walk of their entry to `onRestore`. The answer,
 * called before a step, makes that step take the place of the entry instead: a correction
 * (a cursor refused) that Back should not return to.
 */
export function useAddress(walk: Walk, onRestore: (walk: Walk) => void): () => void {
  const { trail, shownBefore, firstPage } = walk;
  // A walk restored from the history (Back, Forward) is already where it belongs.
  const restored = useRef(false);
  const replacing = useRef(false);
  useEffect(() => {
    if (restored.current) {
      restored.current = false;
      return;
    }
    const address = addressOf(trail[trail.length - 1] as ListQuery);
    const kept: Walk = { trail, shownBefore, firstPage };
    const same = address === (location.search || location.pathname);
    if (same || replacing.current) history.replaceState(kept, "", address);
    else history.pushState(kept, "", address);
    replacing.current = false;
  }, [trail, firstPage]);
  useEffect(() => {
    const onPopState = () => {
      restored.current = true;
      onRestore(currentWalk());
    };
    addEventListener("popstate", onPopState);
    return () => removeEventListener("popstate", onPopState);
  }, []);
  return () => {
    replacing.current = true;
  };
}
