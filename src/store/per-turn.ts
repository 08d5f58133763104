// What is sent during one turn of the event loop, handed on together after it: the writes of
// one group commit, the requests a thread answers at once, the messages between a worker and
// the primary's writer (SQLite); the statements sent together to PostgreSQL (batching.ts).

export interface PerTurn<T> {
  /** Holds the item; the first of a turn schedules the hand-over for after it. */
  push(item: T): void;
  /** Hands on what is held now, if anything (at close). */
  flush(): void;
}

export function perTurn<T>(send: (items: T[]) => void): PerTurn<T> {
  let items: T[] = [];
  const flush = () => {
    if (items.length === 0) return;
    const sent = items;
    items = [];
    send(sent);
  };
  return {
    push(item) {
      if (items.length === 0) setImmediate(flush);
      items.push(item);
    },
    flush,
  };
}
