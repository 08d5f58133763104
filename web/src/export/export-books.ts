// Export the catalogue or a search as a file: page by page through the API, so a large
// catalogue never freezes the page.
import { CSV_BOM, CSV_HEADER, csvLine } from "@book-catalogue/rules/book-csv.js";
import type { BookCatalogueClient } from "book-catalogue";

/** Books a request when exporting: the API's largest page. */
export const EXPORT_PAGE = 1000;

/**
 * The whole catalogue, or the books a search finds, as a file the browser saves: CSV with
 * the header id,title,author,year, or a JSON list, as the command line's export writes them
 * (CSV with its byte-order mark, and cells that would run as formulas neutralised).
 * Read a page of 1,000 at a time; `onProgress` hears how many so far.
 */
export async function exportBooks(
  client: BookCatalogueClient,
  options: { q?: string; format: "csv" | "json"; onProgress: (count: number) => void },
): Promise<{ count: number; name: string }> {
  const parts: string[] = [options.format === "csv" ? `${CSV_BOM}${CSV_HEADER}` : "["];
  let count = 0;
  const query = { limit: EXPORT_PAGE, sort: "id" as const, ...(options.q ? { q: options.q } : {}) };
  for await (const book of client.books(query)) {
    parts.push(
      options.format === "csv"
        ? csvLine(book)
        : `${count === 0 ? "\n" : ",\n"}${JSON.stringify(book)}`,
    );
    count += 1;
    if (count % EXPORT_PAGE === 0) options.onProgress(count);
  }
  if (options.format === "json") parts.push(count === 0 ? "]\n" : "\n]\n");
  const name = `catalogue${options.q ? "-search" : ""}.${options.format}`;
  const link = document.createElement("a");
  link.href = URL.createObjectURL(
    new Blob(parts, { type: options.format === "csv" ? "text/csv" : "application/json" }),
  );
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
  options.onProgress(count);
  return { count, name };
}
