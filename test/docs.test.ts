// The docs stay true to the tree: the architecture page lists every source file and no other,
// every path it names exists, every source folder says what goes there, and every link of the
// README and docs/ leads to a file that exists; the README stays a front door; what the
// operator reads about installing and going back is what the project has.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const ARCHITECTURE = read("docs/architecture.md");

/** Every file under a folder, as paths from the repository's root. */
function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** The paths of the indented tree after the `files` marker: two spaces a level. */
function listedFiles(): string[] {
  const at = ARCHITECTURE.indexOf("<!-- files:");
  assert.ok(at >= 0, "docs/architecture.md has no files marker");
  const block = /```\n([\s\S]*?)```/.exec(ARCHITECTURE.slice(at))?.[1] ?? "";
  const folders: string[] = [];
  const files: string[] = [];
  for (const line of block.split("\n").filter((l) => l.trim() !== "")) {
    const depth = (line.length - line.trimStart().length) / 2;
    const name = line.trim().split(/\s+/)[0] as string;
    folders.length = depth;
    if (name.endsWith("/")) folders.push(name.slice(0, -1));
    else files.push([...folders, name].join("/"));
  }
  return files.sort();
}

test("docs/architecture.md lists every source file, and no other", () => {
  const sources = filesUnder("src")
    .filter((path) => !path.endsWith("README.md"))
    .sort();
  assert.deepEqual(listedFiles(), sources);
});

test("every path docs/architecture.md names exists", () => {
  const named = ARCHITECTURE.match(/`((?:src|web|test|client|bench)\/[^`\s]*)`/g) ?? [];
  assert.ok(named.length > 30, "the walk through a request names its files");
  for (const quoted of named) {
    const path = quoted.slice(1, -1);
    assert.ok(existsSync(join(ROOT, path)), `${path} does not exist`);
  }
});

test("every source folder has a README saying what goes there", () => {
  const folders = new Set(filesUnder("src").map((path) => dirname(path)));
  for (const folder of [...folders, "web/src"]) {
    assert.ok(existsSync(join(ROOT, folder, "README.md")), `${folder}/README.md`);
  }
});

test("every link of the README and docs/ leads to a file that exists; every page is linked", () => {
  const pages = ["README.md", ...filesUnder("docs").filter((path) => path.endsWith(".md"))];
  for (const page of pages) {
    for (const [, target] of read(page).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target as string)) continue;
      const path = join(dirname(join(ROOT, page)), target as string);
      assert.ok(existsSync(path), `${page} links to ${target}, which does not exist`);
    }
  }
  const readme = read("README.md");
  for (const page of pages.filter((path) => path.startsWith("docs/"))) {
    assert.ok(readme.includes(`](${page})`), `README.md does not link ${page}`);
  }
});

test("every repository path the README and docs/ name in backticks exists", () => {
  const pages = ["README.md", ...filesUnder("docs").filter((path) => path.endsWith(".md"))];
  for (const page of pages) {
    for (const [, path] of read(page).matchAll(
      /`((?:src|test|web|bench|client|scripts|docs|deploy)\/[^`\s*]+)`/g,
    )) {
      assert.ok(
        existsSync(join(ROOT, path as string)),
        `${page} names ${path}, which does not exist`,
      );
    }
  }
});

test("the README is a front door: at most 200 lines", () => {
  assert.ok(read("README.md").split("\n").length <= 200);
});

test("no page or source file keeps a merge's conflict markers", () => {
  const texts = [
    "README.md",
    ...["docs", "src", "web/src", "test", "deploy"].flatMap(filesUnder),
  ].filter((path) => /\.(md|ts|tsx|css|conf|service|sh)$/.test(path));
  const marked = texts.filter((path) => /^(<{7}|>{7}) /m.test(read(path)));
  assert.deepEqual(marked, []);
});

test("measured install times say when they were measured", () => {
  const install = /\*\*Install\.\*\*[\s\S]*?\n\n/.exec(read("docs/runtime.md"))?.[0] ?? "";
  assert.match(install, /`npm ci`/);
  assert.match(install, /\b20\d\d-\d\d-\d\d\b/, "docs/runtime.md's install times carry their date");
});

test("the operator installs a release's package or a commit of main, and is told what going back loses", () => {
  const operations = read("docs/operations.md");
  // No release has a tag: a release is the package `npm run release` makes, checked by its sums.
  assert.doesNotMatch(operations, /at its tag/);
  assert.match(operations, /`npm run release`/);
  assert.match(operations, /sha256sum --check SHA256SUMS/);
  assert.match(operations, /From a clone\*\*, at a chosen commit of `main`/);
  const upgrades = operations.slice(operations.indexOf("## Upgrades"));
  assert.match(upgrades, /Going back loses what was written since/);
  assert.match(upgrades, /new books get the ids of the books\s+created since/);
  assert.match(upgrades, /go forward instead/);
});
