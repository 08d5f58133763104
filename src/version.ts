// The service's version (semantic versioning, CHANGELOG.md), read once from its package.json:
// in /health, the start-up line, the CLI's --version and the OpenAPI document.
import { readFileSync } from "node:fs";

export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;
