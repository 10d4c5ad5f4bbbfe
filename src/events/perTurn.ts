// Requests made within one turn of the event loop, handed over together at its end: the one meaning of "turn"
// (identity checks, effect groups, AMQP settlements). Messages that arrive in one socket read are handled in one
// turn, so their statements can share one round trip, which on two cores is what the database path costs most;
// a request alone waits for nothing but the rest of its turn.

/** Gathers items by key; at the end of the turn in which a key's first item came, `flush` gets them all. */
export function perTurn<T>(flush: (items: T[]) => void): (key: string, item: T) => void {
  const gathering = new Map<string, T[]>();
  return (key, item) => {
    let items = gathering.get(key);
    if (items === undefined) {
      const group: T[] = [];
      items = group;
      gathering.set(key, group);
      setImmediate(() => {
        gathering.delete(key);
        flush(group);
      });
    }
    items.push(item);
  };
}
