/** "1 book", "1,234 books". */
export const plural = (n: number, noun: string) =>
  `${n.toLocaleString("en")} ${noun}${n === 1 ? "" : "s"}`;

/** "1 book matches", "3 books match": the count of a search. */
export const matching = (n: number) => `${plural(n, "book")} ${n === 1 ? "matches" : "match"}`;
