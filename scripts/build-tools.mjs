// The build's first step. The build (tsc, vite) runs on dev dependencies, and `npm ci` builds
// in `prepare`; an install that leaves them out (`--omit=dev`, or NODE_ENV=production, which
// implies it) would stop at "tsc: not found". This says instead how to install for production.
// Plain JavaScript for any Node that runs npm.
import { createRequire } from "node:module";

/** The packages the build runs or imports (web/vite.config.ts), all dev dependencies. */
const TOOLS = ["typescript", "vite", "@preact/preset-vite"];
/** The production install, as README.md and docs/operations.md give it. */
const PRODUCTION_INSTALL = "npm ci --include=dev && npm prune --omit=dev";

const require = createRequire(import.meta.url);
const missing = TOOLS.filter((name) => {
  try {
    require.resolve(`${name}/package.json`);
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  console.error(`The build needs the dev dependencies (${missing.join(", ")} missing): this`);
  console.error("install left them out (--omit=dev, or NODE_ENV=production). For a production");
  console.error("tree, install everything, build, then remove the dev dependencies:");
  console.error("");
  console.error(`  ${PRODUCTION_INSTALL}`);
  console.error("");
  console.error("See docs/operations.md.");
  process.exit(1);
}
