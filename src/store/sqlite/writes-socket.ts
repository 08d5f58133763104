// With WORKERS above 1 on a SQLite file, the workers reach the primary's writer thread over a
// Unix socket: each worker's writes of one turn go as one line of JSON, and the outcomes of
// each commit come back as one line. No event loop stands between them (the primary's would
// add two hops and its own turns to every write).
import { createConnection, createServer, type Socket } from "node:net";
import { dirname } from "node:path";
import { perTurn } from "../per-turn.js";
import { StoreUnavailableError } from "../store.js";
import type { Write } from "./group-commit.js";
import { type Outcome, settle } from "./outcome.js";
import { isOwnFolder, listenAndKeep, notOwnFolder } from "./socket-folder.js";
import type { Writer } from "./writer.js";

type Sent = [id: number, write: Write][];
type Answered = [id: number, outcome: Outcome][];

/** Calls `onLine` with each whole line the socket reads. */
function readLines(socket: Socket, onLine: (line: string) => void): void {
  let partial = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() as string;
    for (const line of lines) onLine(line);
  });
}

/**
 * In the writer's thread: takes the writes sent to `path` (any file there is replaced, and the
 * socket made again if it goes: socket-folder.ts) and hands each to `take` with where its
 * outcome goes. `close` ends every connection once what was written to it is sent.
 */
export function listenForWrites(
  path: string,
  take: (id: number, write: Write, replyTo: (outcomes: Answered) => void) => void,
  onListening: () => void,
  keeping?: Parameters<typeof listenAndKeep>[3],
): { close(): void } {
  const connections = new Set<Socket>();
  const server = createServer((socket) => {
    connections.add(socket);
    socket.on("close", () => connections.delete(socket));
    socket.on("error", () => socket.destroy());
    const replyTo = (outcomes: Answered) => {
      if (socket.writable) socket.write(`${JSON.stringify(outcomes)}\n`);
    };
    readLines(socket, (line) => {
      try {
        for (const [id, write] of JSON.parse(line) as Sent) take(id, write, replyTo);
      } catch {
        socket.destroy();
      }
    });
  });
  const stopKeeping = listenAndKeep(server, path, onListening, keeping);
  return {
    close: () => {
      stopKeeping();
      server.close();
      for (const socket of connections) socket.end();
    },
  };
}

/**
 * In a worker: the writer at `path`. `onCommit` runs before each commit's outcomes are handed
 * on. A write that cannot reach the writer, or whose connection closes before its answer,
 * answers 503; the next write connects again.
 */
export function writerAtSocket(path: string, onCommit: () => void): Writer {
  const waiting = new Map<number, (outcome: Outcome) => void>();
  let next = 0;
  let connection: Socket | undefined;
  const hand = (outcomes: Answered) => {
    for (const [id, outcome] of outcomes) {
      waiting.get(id)?.(outcome);
      waiting.delete(id);
    }
    if (waiting.size === 0) connection?.unref();
  };
  const answer = (outcomes: Answered) => {
    onCommit();
    hand(outcomes);
  };
  const connect = () => {
    const socket = createConnection(path);
    readLines(socket, (line) => answer(JSON.parse(line) as Answered));
    socket.on("error", () => {});
    socket.on("close", () => {
      connection = undefined;
      for (const resolve of waiting.values()) resolve({ failed: "unavailable" });
      waiting.clear();
    });
    return socket;
  };
  const send = perTurn((writes: Sent) => {
    // Only to a writer in a folder of this user's alone: whoever made another in its place
    // (once a cleaner had removed it) must not take the catalogue's writes.
    if (connection === undefined && !isOwnFolder(dirname(path))) {
      const message = notOwnFolder(dirname(path));
      return hand(writes.map(([id]) => [id, { failed: "unavailable", message }]));
    }
    connection ??= connect();
    connection.ref();
    connection.write(`${JSON.stringify(writes)}\n`);
  });
  return {
    write: (write) =>
      new Promise<Outcome>((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        send.push([id, write]);
      }).then(settle),
    close: async () => {
      send.flush();
      connection?.end();
    },
    ping: () => reachable(path),
  };
}

/**
 * Resolves when a writer listens at `path`, in a folder of this user's alone; else rejects
 * with StoreUnavailableError: the socket or its folder was removed, and the writer has not
 * yet made it again. Connections already made go on, so only a new one tells.
 */
function reachable(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const folder = dirname(path);
    if (!isOwnFolder(folder)) {
      return reject(new StoreUnavailableError({ cause: new Error(notOwnFolder(folder)) }));
    }
    const probe = createConnection(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve();
    });
    probe.once("error", (error) => reject(new StoreUnavailableError({ cause: error })));
  });
}
