// A client generated from the served /openapi.json, as an integrator makes one: types from
// openapi-typescript, calls through openapi-fetch. It must compile under strict TypeScript with
// no cast, and drive every route of the live service.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import openapiTS, { astToString } from "openapi-typescript";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { describe } from "../support/describe.js";
import { buildTestApp, listenLocally, TEST_PASSWORD, TEST_USERNAME } from "../support/helpers.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** What drive.ts reports of each call, as far as this test reads it. */
type Drive = (
  base: string,
  username: string,
  password: string,
) => Promise<{ created: { book: { id: number } } }>;
const HERE = join(ROOT, "test/client/generated-client");

describe("a client generated from /openapi.json", () => {
  let app: App;
  let base: string;
  let types: string;
  before(async () => {
    app = await buildTestApp();
    base = await listenLocally(app);
    // The document as served, read by openapi-typescript over HTTP as an integrator's build would.
    types = astToString(await openapiTS(new URL(`${base}/openapi.json`)));
    writeFileSync(join(HERE, "api.d.ts"), types);
  });
  after(() => app?.close());

  test("has an operation per operationId and a type per named schema", () => {
    assert.doesNotMatch(types, /operations = Record<string, never>/);
    for (const name of ["createToken", "createBook", "listBooks", "getBook", "updateBook"]) {
      assert.match(types, new RegExp(`\\n    ${name}: \\{`), name);
    }
    for (const name of ["Book", "NewBook", "BookChanges", "BooksEnvelope", "EmptyEnvelope"]) {
      assert.match(types, new RegExp(`\\n        ${name}: \\{`), name);
    }
  });

  test("the integrator's code compiles under strict TypeScript, with no cast", async () => {
    const code = readFileSync(join(HERE, "drive.ts"), "utf8").replace(/^\s*\/\/.*$/gm, "");
    assert.doesNotMatch(code, /\bas\s+\w|<any>|: any\b|@ts-|!\./, "no cast, no any, no `!`");
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    await promisify(execFile)(process.execPath, [tsc, "-p", join(HERE, "tsconfig.json")]).catch(
      (error: { stdout: string }) => assert.fail(`tsc:\n${error.stdout}`),
    );
  });

  test("and drives the token and the five book routes of the live service", async () => {
    // Imported by a computed name: drive.ts compiles only once api.d.ts is generated beside it,
    // and the project's own type check runs before that (the test above compiles it).
    const driver = "./generated-client/drive.js";
    const { drive } = (await import(driver)) as { drive: Drive };
    const seen = await drive(base, TEST_USERNAME, TEST_PASSWORD);
    const book = seen.created.book;
    assert.deepEqual(seen, {
      login: Messages.tokenGenerated,
      created: { message: Messages.bookCreated, book },
      read: book,
      page: {
        titles: ["If on a winter's night a traveler"],
        total: "2",
        next: `</books?limit=1&sort=-year&author=Italo+Calvino&after=2&after_key=1979>; rel="next"`,
      },
      byYear: ["Invisible Cities"],
      updated: 1973,
      deleted: Messages.bookDeleted,
      gone: { status: 404, message: Messages.bookNotFound },
      refused: { status: 400, message: Messages.invalidInput },
    });
    assert.equal(typeof book.id, "number");
  });
});
