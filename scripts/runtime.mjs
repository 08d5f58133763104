// The first step of `npm ci` (prepare). The service needs the Node that `engines` names
// (node:sqlite). On an older Node this fetches a supported Node from the npm registry (the
// node-<os>-<cpu> package, the same bytes as nodejs.org's build), unpacks it under
// node_modules/.runtime and links node_modules/.bin/node to it. npm puts node_modules/.bin
// first on the PATH of its scripts, so the build, `npm start` and `npm test` then run on it.
// On a supported Node it does nothing. Plain JavaScript for any Node that runs npm.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The Node fetched for an older one: the Active LTS line, pinned for repeatable installs. */
const RUNTIME = "26.10.0";

const root = fileURLToPath(new URL("..", import.meta.url));
const wanted = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node;
const minimum = /^>=\s*(\d+)\.(\d+)/.exec(wanted);
if (!minimum) throw new Error(`engines.node must read ">=MAJOR.MINOR", not ${wanted}`);
const [major, minor] = process.versions.node.split(".").map(Number);
const supported =
  major > Number(minimum[1]) || (major === Number(minimum[1]) && minor >= Number(minimum[2]));
if (supported) process.exit(0);

const os = { linux: "linux", darwin: "darwin" }[process.platform];
if (os === undefined || !["x64", "arm64"].includes(process.arch)) {
  console.error(`Node ${process.version} is older than this project needs (${wanted}), and the`);
  console.error(`npm registry has no Node build for ${process.platform}-${process.arch}.`);
  console.error(`Install Node ${wanted.replace(">=", "")} or later, then run npm ci again.`);
  process.exit(1);
}

const home = join(root, "node_modules", ".runtime", `node-v${RUNTIME}`);
const node = join(home, "bin", "node");
if (!existsSync(node)) {
  const spec = `node-${os}-${process.arch}@${RUNTIME}`;
  console.log(`Node ${process.version} is older than this project needs (${wanted}):`);
  console.log(`fetching ${spec} from the npm registry for this project's scripts.`);
  const work = mkdtempSync(join(root, "node_modules", ".runtime-"));
  // npm_execpath is the npm running this script; outside npm, the one on the PATH.
  const npm = process.env.npm_execpath
    ? [process.execPath, [process.env.npm_execpath]]
    : ["npm", []];
  const tarball = execFileSync(
    npm[0],
    [...npm[1], "pack", spec, "--pack-destination", work, "--silent"],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  ).trim();
  execFileSync("tar", ["xzf", join(work, tarball), "-C", work]);
  mkdirSync(join(home, ".."), { recursive: true });
  // C headers are for native builds, which this project has none of: 61 MB not kept.
  rmSync(join(work, "package", "include"), { recursive: true, force: true });
  renameSync(join(work, "package"), home);
  rmSync(work, { recursive: true, force: true });
}
const bin = join(root, "node_modules", ".bin");
mkdirSync(bin, { recursive: true });
rmSync(join(bin, "node"), { force: true });
symlinkSync(join("..", ".runtime", `node-v${RUNTIME}`, "bin", "node"), join(bin, "node"));
const version = execFileSync(join(bin, "node"), ["--version"], { encoding: "utf8" }).trim();
console.log(`npm scripts of this project run on Node ${version} (node_modules/.bin/node).`);
