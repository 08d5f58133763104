// Imported first by both entries, before any module that loads node:sqlite. On a Node older
// than package.json's engines (a unit, pm2 or a container running `node dist/server/main.js`
// on the system's Node) that load fails with a stack naming no cause: one line instead, and
// exit 1. Nothing here may import beyond node:fs.
import { readFileSync } from "node:fs";

const packageJson = new URL("../package.json", import.meta.url);
const wanted: string = JSON.parse(readFileSync(packageJson, "utf8")).engines.node;
const minimum = /^>=\s*(\d+)\.(\d+)/.exec(wanted)?.slice(1).map(Number) ?? [0, 0];
const running = process.versions.node.split(".").map(Number);
const [major = 0, minor = 0] = running;
const [needMajor = 0, needMinor = 0] = minimum;
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  process.stderr.write(
    `book-catalogue: Node ${process.version} is too old: this service needs Node ${wanted} (package.json engines); run it with npm start, which uses the Node npm ci fetched, or install Node ${needMajor}.${needMinor} or later\n`,
  );
  process.exit(1);
}
