// The typed client as someone else's project gets it: `npm pack ./client` as its README says,
// which leaves the tree as it was, the tarball installed in an empty folder (offline: it has
// no dependencies), its README read there, imported from plain Node ESM and from TypeScript,
// and run against a live service.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { describe } from "../support/describe.js";
import { buildTestApp, listenLocally, TEST_PASSWORD, TEST_USERNAME } from "../support/helpers.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const run = promisify(execFile);

// What the user's program does with the client; the same lines as ESM and as TypeScript.
const PROGRAM = `
const [baseUrl, username, password, closedUrl] = process.argv.slice(2);
const catalogue = createClient({ baseUrl, username, password });
const book = await catalogue.createBook({ title: "Kindred", author: "Octavia E. Butler", year: 1979 });
const updated = await catalogue.updateBook(book.id, { year: 1980 });
const page = await catalogue.listPage({ author: "Octavia E. Butler", limit: 10 }, { count: true });
await catalogue.deleteBook(book.id);
const gone = createClient({ baseUrl: closedUrl, username, password });
const failures = [];
for (const attempt of [() => catalogue.getBook(book.id), () => gone.getBook(1)]) {
  try {
    await attempt();
  } catch (error) {
    if (error instanceof CatalogueError) failures.push([error.status, error.message]);
  }
}
console.log(JSON.stringify({ year: updated.year, total: page.total, failures }));
`;

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/**
 * The pack command client/README.md gives (docs/client.md gives the same), to run from the
 * clone, with `destination` for the folder it names and `--json` to read what it packed.
 */
function documentedPack(destination: string): string[] {
  const commands = ["client/README.md", "docs/client.md"].map((page) =>
    readFileSync(join(ROOT, page), "utf8")
      .split("\n")
      .find((line) => line.startsWith("npm pack "))
      ?.replace(/#.*/, "")
      .trim(),
  );
  assert.equal(commands[1], commands[0], "docs/client.md packs as client/README.md does");
  const [, ...args] = (commands[0] ?? "").split(/\s+/);
  const at = args.indexOf("--pack-destination");
  assert.ok(at >= 0, `the README packs into a folder of its own: ${commands[0]}`);
  args[at + 1] = destination;
  return [...args, "--json"];
}

/** What packing could leave in the tree: the tarball beside the clone's files, client/'s files. */
const packingLeftovers = () => [
  ...readdirSync(ROOT).filter((name) => name.endsWith(".tgz")),
  ...readdirSync(join(ROOT, "client"), { recursive: true }).map((name) => `client/${name}`),
];

describe("the packed client, installed elsewhere", () => {
  let app: App;
  let args: string[];
  let closed: string;
  let project: string;
  let packed: { filename: string; files: { path: string }[] };
  let treeBefore: string[];
  let treeAfter: string[];

  before(async () => {
    app = await buildTestApp();
    closed = await closedPortUrl();
    args = [await listenLocally(app), TEST_USERNAME, TEST_PASSWORD, closed];
    project = mkdtempSync(join(tmpdir(), "books-user-"));
    treeBefore = packingLeftovers();
    const { stdout } = await run("npm", documentedPack(project), { cwd: ROOT });
    treeAfter = packingLeftovers();
    [packed] = JSON.parse(stdout.slice(stdout.indexOf("[")));
    // The user's project: ESM, as a new Node project is.
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "user-project", private: true, type: "module" }),
    );
  });
  after(async () => {
    await app?.close();
    rmSync(project, { recursive: true, force: true });
  });

  const expected = () => ({
    year: 1980,
    total: 1,
    failures: [
      [404, Messages.bookNotFound],
      [0, `cannot reach the service at ${closed}: ECONNREFUSED`],
    ],
  });

  test("the tarball holds the client, its types, README and license: nothing of the server", () => {
    assert.deepEqual(packed.files.map((file) => file.path).sort(), [
      "LICENSE",
      "README.md",
      "dist/client/client.d.ts",
      "dist/client/client.js",
      "dist/rules/book.d.ts",
      "package.json",
    ]);
  });

  test("packing as documented leaves the tree as it was: no tarball, no build output", () => {
    assert.deepEqual(treeAfter, treeBefore);
    assert.ok(existsSync(join(project, packed.filename)), "the tarball is in the folder named");
  });

  test("installs offline in an empty folder, with no dependency", async () => {
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", `./${packed.filename}`], {
      cwd: project,
    });
    assert.deepEqual(
      readdirSync(join(project, "node_modules")).filter((n) => !n.startsWith(".")),
      ["book-catalogue"],
    );
  });

  test("its README's links lead to files of the package", () => {
    const installed = join(project, "node_modules", "book-catalogue");
    const readme = readFileSync(join(installed, "README.md"), "utf8");
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map(([, target]) => target);
    assert.ok(links.length > 0, "the README links the package's license");
    for (const target of links) {
      if (/^[a-z]+:/.test(target as string)) continue;
      assert.ok(!(target as string).startsWith(".."), `${target} leads out of the package`);
      assert.ok(existsSync(join(installed, target as string)), `${target} is not in the package`);
    }
  });

  test("plain Node ESM imports it and runs it against the service", async () => {
    writeFileSync(
      join(project, "use.mjs"),
      `import { CatalogueError, createClient } from "book-catalogue";\n${PROGRAM}`,
    );
    const { stdout } = await run(process.execPath, ["use.mjs", ...args], { cwd: project });
    assert.deepEqual(JSON.parse(stdout), expected());
  });

  test("TypeScript type-checks it strictly, and the compiled program runs against the service", async () => {
    writeFileSync(
      join(project, "use.ts"),
      `import { type Book, CatalogueError, createClient } from "book-catalogue";\n` +
        // No @types/node in the user's project: the one Node global the program uses.
        `declare const process: { argv: string[] };\n` +
        `const failures: [number, string][] = [];\n` +
        PROGRAM.replace("const failures = [];", "").replace("const book = ", "const book: Book = "),
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2023", "DOM"],
          types: [],
          strict: true,
          outDir: "out",
        },
        files: ["use.ts"],
      }),
    );
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project }).catch(
      (error: { stdout: string }) => assert.fail(`tsc:\n${error.stdout}`),
    );
    const { stdout } = await run(process.execPath, ["out/use.js", ...args], { cwd: project });
    assert.deepEqual(JSON.parse(stdout), expected());
  });
});
