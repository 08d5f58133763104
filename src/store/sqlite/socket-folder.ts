// The writer's socket lives in a folder of the temporary directory, which a cleaner (or an
// operator) may empty while the service runs. The writer's thread checks that its socket is
// still there and makes it again, its folder too, so that a worker started later (one that
// replaces a worker that died) still reaches the writer.
import { lstatSync, mkdirSync, rmSync } from "node:fs";
import type { Server } from "node:net";
import { dirname } from "node:path";

/** How often the writer's thread checks its socket. */
export const SOCKET_CHECK_MS = 5_000;

/** Why the writer and the workers will not use `folder`. */
export const notOwnFolder = (folder: string) =>
  `${folder} is not a folder of this service's user alone`;

/** Whether `folder` is a folder (not a link) of this user's that no one else may enter. */
export function isOwnFolder(folder: string): boolean {
  try {
    const found = lstatSync(folder);
    return found.isDirectory() && found.uid === process.getuid?.() && (found.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** Makes `folder` for this user alone, or checks that the one there is such: never another's. */
export function ownFolder(folder: string): void {
  try {
    mkdirSync(folder, { mode: 0o700 });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  if (!isOwnFolder(folder)) {
    throw new Error(`${notOwnFolder(folder)}: not listening there`);
  }
}

/**
 * `server` listens at `path` (any file there is replaced) and goes on listening there: every
 * `checkMs`, a socket that is gone, or another file in its place, is made again; `onTrouble`
 * hears that it was, or why it cannot be. A failure of the first listen is thrown. Returns how
 * to stop.
 */
export function listenAndKeep(
  server: Server,
  path: string,
  onListening: () => void,
  { checkMs = SOCKET_CHECK_MS, onTrouble = (_error: Error) => {} } = {},
): () => void {
  // The socket's inode once it listens: another file at `path` is not it.
  let listening: number | undefined;
  server.on("error", (error) => {
    if (listening === undefined) throw error;
    onTrouble(error);
  });
  const listen = (then: () => void) => {
    ownFolder(dirname(path));
    rmSync(path, { force: true });
    server.listen(path, () => {
      listening = lstatSync(path).ino;
      then();
    });
  };
  listen(onListening);
  const check = setInterval(() => {
    try {
      if (lstatSync(path).ino === listening) return;
    } catch {
      // Gone: made again below.
    }
    try {
      // The workers' connections stay; new ones come to the socket made again.
      server.close();
      listen(() => onTrouble(new Error(`${path} was gone: listening there again`)));
    } catch (error) {
      onTrouble(error as Error);
    }
  }, checkMs);
  check.unref();
  return () => clearInterval(check);
}
