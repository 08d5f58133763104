// CI (.ci/run) runs the whole suite on its first Node line, then again on every other
// supported line with TEST_NODE_LINE_AGAIN=1. The suites of these files test what cannot
// depend on the Node line: Debian's programs on the deployment's files, the linters on the
// API description, the pages' own code in Chromium, the librarian's and the API docs' (the
// routes they call are tested on every line), the release's single executable (it carries
// its own Node), the install on the machine's own Node, the suite's helpers, and the long
// soak of PostgreSQL's faults under load (a minute; the shorter fault tests, failover, stalls
// and timeouts, run on every line). On the later lines each of their suites is one skipped
// test, counted, with the reason below. This list is the one place that names them; each
// holds suites only (test/suite/skips.test.ts checks).
import { relative } from "node:path";
import { ROOT } from "./deploy.js";

export const FIRST_LINE_ONLY: readonly string[] = [
  "test/deploy/nginx-stream.test.ts",
  "test/deploy/nginx.test.ts",
  "test/deploy/production-install.test.ts",
  "test/deploy/systemd.test.ts",
  "test/http/docs-page.test.ts",
  "test/http/openapi-lint.test.ts",
  "test/release/single-file.test.ts",
  "test/store/restarts.test.ts",
  "test/suite/clusters.test.ts",
  "test/suite/pgbouncer.test.ts",
  "test/suite/ports.test.ts",
  "test/suite/screenshots.test.ts",
  "test/web/web-accounts.test.ts",
  "test/web/web-conflict.test.ts",
  "test/web/web-import.test.ts",
  "test/web/web-layout.test.ts",
  "test/web/web-live.test.ts",
  "test/web/web-page.test.ts",
  "test/web/web-paging.test.ts",
  "test/web/web-reasons.test.ts",
];

/** The reason to skip this test file's suites on this run, or false. */
export function lineSkip(file = process.argv[1] ?? ""): string | false {
  const again = process.env.TEST_NODE_LINE_AGAIN === "1";
  return again && FIRST_LINE_ONLY.includes(relative(ROOT, file))
    ? "runs on the first Node line of CI only (test/support/node-lines.ts)"
    : false;
}
