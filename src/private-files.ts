// The catalogue's files are its user's alone: the SQLite database with the -wal and -shm files
// SQLite makes beside it, the backups and their temporary files, and the folders the service
// makes for them. Another local user who could read them would read the catalogue; one who
// could open -shm could hold a lock on it and stop every write; one who could write the
// folder could plant a file or a link under a name the service is about to open.
import { randomBytes } from "node:crypto";
import { constants, mkdirSync, statSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { DbTarget } from "./config.js";

const PRIVATE_FOLDER_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
/** Group- or other-writable. */
const WRITABLE_BY_OTHERS = 0o022;
const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, "0");

/**
 * Makes every file and folder this process creates its user's alone (0600 and 0700),
 * whatever umask it was started with. Each program's main calls it before anything creates
 * a file: SQLite makes -wal and -shm itself, so the umask is the one place that reaches them.
 */
export function keepFilesPrivate(): void {
  process.umask(0o077);
}

/** A name beside `file` for it until it is complete: no one can guess it (nor plant a link). */
export const temporaryName = (file: string, suffix: string): string =>
  join(dirname(file), `.${basename(file)}.${randomBytes(12).toString("hex")}.${suffix}`);

/**
 * Creates `path` for writing, its user's alone; fails (EEXIST) when anything is there
 * already, a symbolic link included, rather than write through it.
 */
export function createPrivateFile(path: string): Promise<FileHandle> {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;
  return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, PRIVATE_FILE_MODE);
}

/**
 * Why another local user could change what `folder` holds, or undefined: it belongs to a user
 * other than this one or root, or its group or others may write it (a sticky bit, as /tmp
 * has, does not help: others may still create the names the service will open there). A
 * folder not there yet is made private when needed, and passes.
 */
export function sharedFolderProblem(what: string, folder: string): string | undefined {
  const uid = process.getuid?.();
  let found: ReturnType<typeof statSync>;
  try {
    found = statSync(folder);
  } catch {
    return undefined;
  }
  if (uid === undefined || !found.isDirectory()) return undefined;
  if (found.uid !== uid && found.uid !== 0) {
    return `${what} ${folder} belongs to another user (uid ${found.uid}): use a folder of the service's user`;
  }
  if ((found.mode & WRITABLE_BY_OTHERS) !== 0) {
    return `${what} ${folder} may be written by other users (mode ${octal(found.mode)}): chmod go-w ${folder}, or use a folder of the service's user alone`;
  }
  return undefined;
}

/**
 * Makes `folder` (and the folders above it that are missing) its user's alone when absent;
 * throws when others may write the one there (sharedFolderProblem). `what` names it.
 */
export function privateFolder(folder: string, what: string): void {
  mkdirSync(folder, { recursive: true, mode: PRIVATE_FOLDER_MODE });
  const shared = sharedFolderProblem(what, folder);
  if (shared !== undefined) throw new Error(shared);
}

/**
 * A warning when others may read the SQLite database (one an older release made, say): its
 * mode is left as it is, the operator's to change, but SQLite gives -wal and -shm the same.
 */
export function exposedDatabaseWarning(db: DbTarget): string | undefined {
  if (db.kind !== "sqlite" || db.path === ":memory:") return undefined;
  let mode: number;
  try {
    mode = statSync(db.path).mode;
  } catch {
    return undefined;
  }
  if ((mode & 0o007) === 0) return undefined;
  return `the database ${db.path} may be read by other users (mode ${octal(mode)}), and its -shm locked to stop every write: chmod o-rwx ${db.path} ${db.path}-wal ${db.path}-shm`;
}
