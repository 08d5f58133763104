// The catalogue behind the import dialog follows the import: the client handed to the dialog
// reports each book it adds, and the listing and its count are asked again at most twice a
// second while books come in.

import type { BookCatalogueClient } from "book-catalogue";
import { useMemo, useRef } from "preact/hooks";

const REFRESH_MS = 500;

export function useImportingClient(client: BookCatalogueClient, refresh: () => void) {
  const timer = useRef<ReturnType<typeof setTimeout>>();
  return useMemo<BookCatalogueClient>(() => {
    const added = () => {
      if (timer.current !== undefined) return;
      timer.current = setTimeout(() => {
        timer.current = undefined;
        refresh();
      }, REFRESH_MS);
    };
    return {
      ...client,
      createBook: async (book) => {
        const saved = await client.createBook(book);
        added();
        return saved;
      },
    };
  }, [client]);
}
