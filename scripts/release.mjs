// npm run release [-- --out DIR] [--package-only]: the release's files, each named with the
// version, in DIR (release/ by default): the package (npm pack: the built server, page and
// CLI; npm installs its runtime dependencies, and nothing is built where it is installed), one
// executable file for linux-x64 (Node's single executable application: Node and the installed
// package in one file) and SHA256SUMS. The build is the tree's own: `npm run release` builds
// first.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values } = parseArgs({
  options: { out: { type: "string", default: "release" }, "package-only": { type: "boolean" } },
});
const out = resolve(root, values.out);
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const { name, version } = manifest;
const run = (command, args, cwd) =>
  execFileSync(command, args, { cwd, stdio: ["ignore", "ignore", "inherit"] });

/**
 * The package, packed from a copy whose package.json has no development scripts (npm would ask
 * to allow `prepare`), with the lockfile as its shrinkwrap: an install gets the versions the
 * tests ran. Returns its path.
 */
function pack(stage) {
  const copy = join(stage, "package");
  for (const path of [
    ...manifest.files.filter((f) => !f.startsWith("!")),
    "README.md",
    "LICENSE",
  ]) {
    cpSync(join(root, path), join(copy, path), { recursive: true });
  }
  const { allowScripts, scripts, ...installed } = manifest;
  const files = [...installed.files, "npm-shrinkwrap.json"];
  const packed = { ...installed, scripts: { start: scripts.start }, files };
  writeFileSync(join(copy, "package.json"), `${JSON.stringify(packed, null, 2)}\n`);
  cpSync(join(root, "package-lock.json"), join(copy, "npm-shrinkwrap.json"));
  run("npm", ["pack", "--ignore-scripts", "--loglevel=warn", "--pack-destination", out], copy);
  return join(out, `${name}-${version}.tgz`);
}

/** A Node that builds single executables (`--build-sea`, 25.5 and later): this one, or the fetched. */
function seaBuilder() {
  const runtimes = join(root, "node_modules", ".runtime");
  const candidates = [
    process.execPath,
    ...(existsSync(runtimes)
      ? readdirSync(runtimes).map((d) => join(runtimes, d, "bin", "node"))
      : []),
  ];
  const builds = (node) => {
    const [major, minor] = execFileSync(node, ["-p", "process.versions.node"], { encoding: "utf8" })
      .split(".")
      .map(Number);
    return major > 25 || (major === 25 && minor >= 5);
  };
  const node = candidates.find((candidate) => existsSync(candidate) && builds(candidate));
  if (node === undefined)
    throw new Error("the single executable needs Node 25.5 or later to build it");
  return node;
}

/**
 * The single executable: the package installed as an operator would (`npm ci --omit=dev`), every
 * file of it embedded and read in place (`useVfs`), the CLI its entry. The store's threads
 * cannot read embedded files: each thread's entry is bundled into one module (Vite, as the page
 * is) that the service hands its thread whole (thread-channel.ts).
 */
async function singleExecutable(stage, tarball) {
  const app = join(stage, "app");
  mkdirSync(app);
  run("tar", ["xzf", tarball, "--strip-components=1", "-C", app]);
  run(
    "npm",
    // A stalled download is tried again after 30 s (npm's own bound: 5 minutes a try).
    [
      "ci",
      "--omit=dev",
      "--ignore-scripts",
      "--loglevel=warn",
      "--no-audit",
      "--no-fund",
      "--fetch-timeout=30000",
      "--fetch-retries=3",
    ],
    app,
  );
  const { build } = await import("vite");
  for (const entry of ["writer-thread", "count-thread", "migrate-thread"]) {
    await build({
      configFile: false,
      logLevel: "warn",
      root: app,
      ssr: { noExternal: true, target: "node" },
      build: {
        ssr: join(app, "dist", "store", "sqlite", `${entry}.js`),
        outDir: join(app, "threads"),
        emptyOutDir: false,
        target: "node22",
        minify: false,
        rollupOptions: { output: { entryFileNames: `${entry}.mjs`, codeSplitting: false } },
      },
    });
  }
  writeFileSync(join(stage, "main.mjs"), 'import "./dist/cli/main.js";\n');
  const assets = {};
  for (const file of readdirSync(app, { recursive: true, withFileTypes: true })) {
    if (!file.isFile()) continue;
    const path = join(file.parentPath, file.name);
    assets[relative(app, path)] = path;
  }
  const output = join(out, `book-catalogue-${version}-linux-x64`);
  const config = {
    main: join(stage, "main.mjs"),
    mainFormat: "module",
    output,
    disableExperimentalSEAWarning: true,
    useVfs: true,
    assets,
  };
  writeFileSync(join(stage, "sea.json"), JSON.stringify(config));
  run(seaBuilder(), ["--build-sea", join(stage, "sea.json")], stage);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const stage = mkdtempSync(join(tmpdir(), "book-catalogue-release-"));
try {
  const tarball = pack(stage);
  if (!values["package-only"]) await singleExecutable(stage, tarball);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
const files = readdirSync(out).sort();
const sums = files.map((file) => {
  const digest = createHash("sha256")
    .update(readFileSync(join(out, file)))
    .digest("hex");
  return `${digest}  ${file}\n`;
});
writeFileSync(join(out, "SHA256SUMS"), sums.join(""));
process.stdout.write(`${files.map((file) => join(values.out, file)).join("\n")}\n`);
