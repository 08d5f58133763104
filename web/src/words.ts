/** "1 book", "1,234 books". */
export const plural = (n: number, noun: string) =>
  `${n.toLocaleString("en")} ${noun}${n === 1 ? "" : "s"}`;
