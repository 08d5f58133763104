// A second local Unix user, made by a test and removed after it: what another user of the
// machine can do to the service's files. Adding a user needs root, which CI has.
import { execFileSync, spawnSync } from "node:child_process";

/** Why the other user's tests cannot run here, or false; never skipped under CI. */
export const localUserSkip =
  process.getuid?.() === 0 || process.env.CI === "true"
    ? false
    : "adding a local user needs root (CI runs as root)";

export interface LocalUser {
  name: string;
  uid: number;
  /** Whether `command` succeeds when this user runs it. */
  succeeds(command: readonly string[]): boolean;
  /** Removes the user and its home. */
  remove(): void;
}

export function addLocalUser(): LocalUser {
  const name = `books-other-${process.pid}`;
  execFileSync("useradd", ["--create-home", "--shell", "/bin/sh", name], { stdio: "pipe" });
  const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
  return {
    name,
    uid,
    succeeds: (command) =>
      spawnSync("runuser", ["-u", name, "--", ...command], { stdio: "ignore", timeout: 10_000 })
        .status === 0,
    remove: () => {
      execFileSync("userdel", ["-r", name], { stdio: "pipe" });
    },
  };
}
