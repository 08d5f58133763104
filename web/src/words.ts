/** "1 book", "1,234 books". */
export const plural = (n: number, noun: string) =>
  `${n.toLocaleString("en")} ${noun}${n === 1 ? "" : "s"}`;

/** "1 book matches", "3 books match": the count of a search. */
export const matching = (n: number) => `${plural(n, "book")} ${n === 1 ? "matches" : "match"}`;

const RELATIVE = new Intl.RelativeTimeFormat("en", { numeric: "always" });

/** When something was done, as people say it: "just now", "2 minutes ago", "on 3 May 2026". */
export function ago(at: string, now = Date.now()): string {
  const minutes = Math.floor((now - Date.parse(at)) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return RELATIVE.format(-minutes, "minute");
  if (minutes < 24 * 60) return RELATIVE.format(-Math.floor(minutes / 60), "hour");
  if (minutes < 30 * 24 * 60) return RELATIVE.format(-Math.floor(minutes / (24 * 60)), "day");
  return `on ${new Date(at).toLocaleDateString("en-GB", { dateStyle: "long" })}`;
}

/** The date and time in full, for a title beside a relative time. */
export const fullTime = (at: string) =>
  new Date(at).toLocaleString("en-GB", { dateStyle: "long", timeStyle: "short" });
