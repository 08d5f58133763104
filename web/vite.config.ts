import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

// The librarian's page: built into dist/web, which the service serves at `/`.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [preact()],
  build: {
    outDir: "../dist/web",
    emptyOutDir: true,
    // Every file name under assets/ carries a hash of its content (served as immutable).
    assetsDir: "assets",
  },
});
