// Writing a backup: the snapshot's accounts, then its books, streamed to a temporary file beside the target,
// the header written last, then one rename. A backup that fails or is killed leaves no file
// under the target's name, and its temporary file never passes a check.
import { createHash } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { createPrivateFile, temporaryName } from "../private-files.js";
import type { BackupStore, CatalogueSnapshot } from "../store/backup.js";
import { encodeAccount } from "./accounts.js";
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  type BackupHeader,
  checksumOf,
  encodeBook,
  encodeHeader,
  HEADER_BYTES,
} from "./format.js";

type Progress = (done: number, total: number) => void;

/** A new name for a backup to be written under until it is complete, each call its own. */
export const partialName = (file: string) => temporaryName(file, "partial");

/**
 * Writes one consistent snapshot of the store to `file`, replacing it only when complete; until
 * then, to `temporary`, which must not exist.
 */
export async function writeBackup(
  store: BackupStore,
  file: string,
  onProgress?: Progress,
  temporary = partialName(file),
): Promise<BackupHeader> {
  // Created, never opened: a link planted in the folder is not written through.
  const handle = await createPrivateFile(temporary);
  try {
    // Blanks where the header goes: until it is written, the file is no backup.
    await handle.write(Buffer.alloc(HEADER_BYTES, " "));
    const header = await store.readSnapshot((snapshot) =>
      writeSnapshot(snapshot, (bytes) => handle.write(bytes), onProgress),
    );
    await handle.write(encodeHeader(header), 0, HEADER_BYTES, 0);
    await handle.sync();
    await handle.close();
    await rename(temporary, file);
    await syncFolder(dirname(file));
    return header;
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temporary, { force: true });
    throw error;
  }
}

async function writeSnapshot(
  snapshot: CatalogueSnapshot,
  write: (bytes: Buffer) => Promise<unknown>,
  onProgress?: Progress,
): Promise<BackupHeader> {
  const createdAt = new Date().toISOString();
  const hash = createHash("sha256");
  const accounts = Buffer.from(snapshot.accounts.map(encodeAccount).join(""));
  hash.update(accounts);
  await write(accounts);
  let books = 0;
  let lastId = 0;
  for await (const page of snapshot.pages()) {
    const bytes = Buffer.from(page.map(encodeBook).join(""));
    hash.update(bytes);
    await write(bytes);
    books += page.length;
    lastId = page.at(-1)?.id ?? lastId;
    onProgress?.(books, snapshot.count);
  }
  if (books !== snapshot.count) {
    throw new Error(`the snapshot counted ${snapshot.count} books but gave ${books}`);
  }
  const nextId = Math.max(snapshot.nextId, lastId + 1);
  const fields = {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    createdAt,
    books,
    accounts: snapshot.accounts.length,
    nextId,
  } as const;
  return { ...fields, sha256: checksumOf(fields, hash.digest("hex")) };
}

/** The rename is durable only once the folder that holds the name is synced. */
async function syncFolder(path: string): Promise<void> {
  const folder = await open(path, "r");
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
