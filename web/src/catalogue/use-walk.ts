// The pages the librarian walks: the search typed, the order, and each page reached so far.
import { searchTerms } from "@book-catalogue/rules/search.js";
import type { ListQuery, SortOrder } from "book-catalogue";
import { useRef, useState } from "preact/hooks";
import type { Jump } from "./jumps.js";
import { type Column, DEFAULT_SORT, PAGE_SIZE } from "./query.js";
import { currentWalk, useAddress, type Walk } from "./use-address.js";

export type WalkState = ReturnType<typeof useWalk>;

/** The walk's state, first as the address has it. */
function useWalkState() {
  const [start] = useState(currentWalk);
  const [search, setSearch] = useState(start.trail.at(-1)?.q ?? "");
  const [sort, setSort] = useState<SortOrder>(start.trail.at(-1)?.sort ?? DEFAULT_SORT);
  // The pages walked so far, each as its query (a cursor never an offset): the last is shown.
  const [trail, setTrail] = useState<ListQuery[]>(start.trail);
  // How many books the pages before each one of the trail showed: a search of very many
  // matches may answer a page with fewer than PAGE_SIZE books, and more after it.
  const [shownBefore, setShownBefore] = useState<number[]>(start.shownBefore);
  const [firstPage, setFirstPage] = useState(start.firstPage ?? 1);
  // A page opened from its address alone (a shared link, say) starts after a cursor at an
  // unknown place: until placed (use-moves.ts), it is called page 1.
  const [unplaced] = useState(() => start.firstPage === undefined && start.trail[0]?.after);
  const shown = useRef(trail);
  shown.current = trail;
  return {
    search,
    setSearch,
    sort,
    setSort,
    trail,
    setTrail,
    shownBefore,
    setShownBefore,
    firstPage,
    setFirstPage,
    start,
    unplaced,
    shown,
  };
}

export function useWalk() {
  const state = useWalkState();
  const { search, setSearch, sort, setSort, trail, setTrail, start, unplaced, shown } = state;
  const { shownBefore, setShownBefore, firstPage, setFirstPage } = state;

  const show = (walk: Walk) => {
    const shown = walk.trail.at(-1);
    setTrail(walk.trail);
    setShownBefore(walk.shownBefore);
    setFirstPage(walk.firstPage ?? 1);
    setSearch(shown?.q ?? "");
    setSort(shown?.sort ?? DEFAULT_SORT);
  };
  const inPlace = useAddress({ trail, shownBefore, firstPage }, show);

  /** Back to the first page, of the search and order given or else those shown. */
  const restart = (changes: { q?: string; sort?: SortOrder }) => {
    // A search with no letter or digit has nothing to look for (the service refuses it): the
    // whole catalogue is shown, and the search bar says why.
    const typed = (changes.q ?? search).trim();
    const q = searchTerms(typed).length > 0 ? typed : "";
    const order = changes.sort ?? sort;
    setTrail([{ limit: PAGE_SIZE, sort: order, ...(q ? { q } : {}) }]);
    setShownBefore([0]);
    setFirstPage(1);
  };

  const page = firstPage + trail.length - 1;
  /** The place in the listing of the page's first book. */
  const first = (shownBefore[trail.length - 1] ?? 0) + 1;
  return {
    query: trail[trail.length - 1] as ListQuery,
    search,
    sort,
    page,
    first,
    setSearch,
    restart,
    clearSearch: () => {
      setSearch("");
      restart({ q: "" });
    },
    sortBy: (field: Column) => {
      const order: SortOrder = sort === field ? `-${field}` : field;
      setSort(order);
      restart({ sort: order });
    },
    /** Back a page along the trail; false when the trail starts here (a jump came here). */
    previous: () => {
      if (trail.length === 1) return false;
      setTrail(trail.slice(0, -1));
      setShownBefore(shownBefore.slice(0, -1));
      return true;
    },
    /** The page opened from its address is page `page`, after `before` books. */
    place: (page: number, before: number) => {
      if (shown.current[0] !== start.trail[0]) return;
      setFirstPage(page);
      setShownBefore((counts) => counts.map((count) => count + before));
    },
    unplaced: Boolean(unplaced),
    /** A refused cursor (a link cut short): the first page of its search and order, in place. */
    dropCursor: () => {
      const shown = trail[trail.length - 1] as ListQuery;
      inPlace();
      restart({ q: shown.q ?? "", sort: shown.sort ?? DEFAULT_SORT });
    },
    /** To a page found other than by Next: the last, or the one holding a book. */
    jump: (to: Jump) =>
      show({ trail: [to.query], shownBefore: [to.shownBefore], firstPage: to.page }),
    /** On to the page `next`, after the `shown` books of this one. */
    forward: (next: ListQuery, shown: number) => {
      setTrail([...trail, next]);
      setShownBefore([...shownBefore, first - 1 + shown]);
    },
  };
}
