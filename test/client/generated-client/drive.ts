// What an integrator writes with types generated from /openapi.json by openapi-typescript
// (./api.d.ts, written by test/client/generated-client.test.ts) and openapi-fetch: every call typed
// from the document alone, with no cast and no hand-written type.
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

type Book = components["schemas"]["Book"];

export async function drive(baseUrl: string, username: string, password: string) {
  const api = createClient<paths>({ baseUrl });

  const login = await api.POST("/token", { body: { username, password } });
  if (!login.data) throw new Error(`POST /token: ${login.error?.message}`);
  const headers = { Authorization: login.data.data.token };

  const created = await api.POST("/book", {
    headers,
    body: { title: "Invisible Cities", author: "Italo Calvino", year: 1972 },
  });
  if (!created.data) throw new Error(`POST /book: ${created.error?.message}`);
  const book: Book = created.data.data;
  await api.POST("/book", {
    headers,
    body: { title: "If on a winter's night a traveler", author: "Italo Calvino", year: 1979 },
  });

  // Numbers go in as numbers: the path id, the limit, the year.
  const read = await api.GET("/book/{id}", { headers, params: { path: { id: book.id } } });
  const page = await api.GET("/books", {
    headers,
    params: {
      query: { limit: 1, sort: "-year", author: "Italo Calvino" },
      header: { prefer: "count=exact" },
    },
  });
  const byYear = await api.GET("/books", { headers, params: { query: { year: 1972 } } });
  const updated = await api.PUT("/book/{id}", {
    headers,
    params: { path: { id: book.id } },
    body: { year: 1973 },
  });
  const deleted = await api.DELETE("/book/{id}", { headers, params: { path: { id: book.id } } });
  const gone = await api.GET("/book/{id}", { headers, params: { path: { id: book.id } } });
  const refused = await api.POST("/book", { headers, body: { title: "", author: "A", year: 1 } });

  return {
    login: login.data.message,
    created: { message: created.data.message, book },
    read: read.data?.data,
    page: {
      titles: page.data?.data.map((b) => b.title),
      total: page.response.headers.get("x-total-count"),
      next: page.response.headers.get("link"),
    },
    byYear: byYear.data?.data.map((b) => b.title),
    updated: updated.data?.data.year,
    deleted: deleted.data?.message,
    gone: { status: gone.response.status, message: gone.error?.message },
    refused: { status: refused.response.status, message: refused.error?.message },
  };
}
