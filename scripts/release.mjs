// npm run release [-- --out DIR]: the release's files, each named with the version, in DIR
// (release/ by default): the package (npm pack: the built server, page and CLI; npm installs
// its runtime dependencies, and nothing is built where it is installed) and SHA256SUMS.
// The build is the tree's own: `npm run release` builds first.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values } = parseArgs({ options: { out: { type: "string", default: "release" } } });
const out = resolve(root, values.out);
const { name, version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// The package is packed from a copy whose package.json has no development scripts (npm would
// ask to allow `prepare`), with the lockfile as its shrinkwrap.
const stage = mkdtempSync(join(tmpdir(), "book-catalogue-release-"));
try {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  for (const path of [
    ...manifest.files.filter((f) => !f.startsWith("!")),
    "README.md",
    "LICENSE",
  ]) {
    cpSync(join(root, path), join(stage, path), { recursive: true });
  }
  const { allowScripts, scripts, ...installed } = manifest;
  writeFileSync(
    join(stage, "package.json"),
    `${JSON.stringify(
      {
        ...installed,
        scripts: { start: scripts.start },
        files: [...installed.files, "npm-shrinkwrap.json"],
      },
      null,
      2,
    )}\n`,
  );
  // The lockfile as the package's shrinkwrap: an install gets the versions the tests ran.
  cpSync(join(root, "package-lock.json"), join(stage, "npm-shrinkwrap.json"));
  execFileSync("npm", ["pack", "--ignore-scripts", "--loglevel=warn", "--pack-destination", out], {
    cwd: stage,
    stdio: ["ignore", "ignore", "inherit"],
  });
} finally {
  rmSync(stage, { recursive: true, force: true });
}
const files = readdirSync(out).sort();
const expected = `${name}-${version}.tgz`;
if (!files.includes(expected)) throw new Error(`npm pack wrote ${files.join(", ")}`);
const sums = files.map((file) => {
  const digest = createHash("sha256")
    .update(readFileSync(join(out, file)))
    .digest("hex");
  return `${digest}  ${file}\n`;
});
writeFileSync(join(out, "SHA256SUMS"), sums.join(""));
process.stdout.write(`${files.map((file) => join(values.out, file)).join("\n")}\n`);
