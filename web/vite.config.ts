import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

const source = (path: string) => fileURLToPath(new URL(`../src/${path}`, import.meta.url));

// The librarian's page: built into dist/web, which the service serves at `/`. It shares the
// book rules and the typed client with the server and the command line, by name (the same
// names stand in web/tsconfig.json for the type checker).
export default defineConfig({
  root: import.meta.dirname,
  plugins: [preact()],
  resolve: {
    alias: [
      { find: /^book-catalogue$/, replacement: source("client/client.ts") },
      { find: /^@book-catalogue\/rules\//, replacement: `${source("rules")}/` },
    ],
  },
  build: {
    outDir: "../dist/web",
    emptyOutDir: true,
    // Every file name under assets/ carries a hash of its content (served as immutable).
    assetsDir: "assets",
  },
});
