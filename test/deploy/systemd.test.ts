// The systemd unit: systemd's own checks of the file as written, and its command line run on
// this checkout with the example environment file. (systemd does not run the unit here: the
// sandbox of its hardening is checked statically, by `systemd-analyze security`.)
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readlinkSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  ENV_EXAMPLE,
  filledEnvExample,
  machinePath,
  parseEnvFile,
  ROOT,
  readRepositoryFile,
  UNIT,
  unitCommand,
  unitSection,
  unitValue,
} from "../support/deploy.js";
import { describe } from "../support/describe.js";
import { startService } from "../support/service.js";

/** Where docs/operations.md installs the service; the tests put this checkout there. */
const INSTALL = "/opt/book-catalogue";

const missing = (() => {
  const found = spawnSync("sh", ["-c", "command -v systemd-analyze"], { stdio: "ignore" });
  return found.status === 0 ? false : "systemd-analyze is not installed (apt-get install systemd)";
})();
if (missing && process.env.CI === "true") throw new Error(`CI=true: ${missing}`);

const service = unitSection(readRepositoryFile(UNIT), "Service");
/** `20s`, `1min 30s` or a bare number of seconds, as systemd reads a time span. */
function seconds(span: string): number {
  let total = 0;
  for (const [, amount, unit] of span.matchAll(/(\d+)\s*(min|s)?/g)) {
    total += Number(amount) * (unit === "min" ? 60 : 1);
  }
  return total;
}

describe("the systemd unit", { skip: missing }, () => {
  test("systemd-analyze verify: exit 0, nothing said about the unit", () => {
    // As written: ExecStart's executable is /bin/sh, which verify finds on any machine,
    // so nothing needs to be substituted.
    const run = spawnSync("systemd-analyze", ["verify", join(ROOT, UNIT)], { encoding: "utf8" });
    const about = `${run.stdout}${run.stderr}`
      .split("\n")
      .filter((line) => line.includes("book-catalogue"));
    assert.deepEqual(about, []);
    assert.equal(run.status, 0, run.stderr);
  });

  test("systemd-analyze security rates its sandbox OK (exposure 2.0 or less)", () => {
    const output = execFileSync(
      "systemd-analyze",
      ["security", "--offline=yes", "--no-pager", join(ROOT, UNIT)],
      { encoding: "utf8" },
    );
    const level = /Overall exposure level for book-catalogue\.service: ([\d.]+) (\w+)/.exec(output);
    assert.ok(level, output);
    assert.ok(Number(level[1]) <= 2.0, `exposure ${level[1]} ${level[2]}`);
  });

  test("it waits longer after SIGTERM than the example file lets requests finish", () => {
    assert.equal(unitValue(service, "KillSignal"), "SIGTERM");
    assert.equal(unitValue(service, "EnvironmentFile"), "/etc/book-catalogue.env");
    const shutdown = Number(parseEnvFile(readRepositoryFile(ENV_EXAMPLE)).SHUTDOWN_TIMEOUT_SECONDS);
    assert.ok(seconds(unitValue(service, "TimeoutStopSec")) > shutdown);
  });

  test("its command line, folder and PATH serve, on the Node the install uses; SIGTERM: exit 0", async () => {
    // Substituted: /opt/book-catalogue is this checkout, and the unit's system folders on PATH
    // are this machine's PATH (where CI puts each Node it tests). The rest as written.
    const [pathSetting] = (service.get("Environment") ?? []).filter((e) => e.startsWith("PATH="));
    assert.ok(pathSetting, "the unit sets PATH");
    const [installBin, ...systemFolders] = pathSetting.slice("PATH=".length).split(":");
    assert.equal(installBin, `${INSTALL}/node_modules/.bin`);
    assert.ok(systemFolders.includes("/usr/bin"));
    const path = `${join(ROOT, "node_modules", ".bin")}:${machinePath()}`;
    const workingDirectory = unitValue(service, "WorkingDirectory").replace(INSTALL, ROOT);
    // No single executable here (single-file.test.ts runs the unit's command on one): the
    // build's server, on the install's Node.
    const command = unitCommand(service);
    assert.deepEqual(command.slice(0, 2), ["/bin/sh", "-c"]);

    const dir = mkdtempSync(join(tmpdir(), "books-unit-"));
    try {
      const { METRICS_PORT: _, ...settings } = filledEnvExample(dir);
      const running = await startService(
        { ...settings, PATH: path, PORT: "0" },
        { command, cwd: workingDirectory },
      );
      // The main process is node itself (the shell execs it), so systemd's SIGTERM reaches it.
      const executable = readlinkSync(`/proc/${running.process.pid}/exe`);
      const installed = join(ROOT, "node_modules", ".bin", "node");
      const machineNode = execFileSync("sh", ["-c", "command -v node"], {
        encoding: "utf8",
        env: { PATH: machinePath() },
      }).trim();
      assert.equal(executable, realpathSync(existsSync(installed) ? installed : machineNode));
      const ready = await fetch(`${running.url}/ready`);
      assert.equal(ready.status, 200);
      const started = Date.now();
      assert.equal(await running.stop("SIGTERM"), 0);
      assert.ok(Date.now() - started < seconds(unitValue(service, "TimeoutStopSec")) * 1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
