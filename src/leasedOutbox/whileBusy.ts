// One flush at a time, and what comes while it runs goes together in the next: items handed over while a
// statement is in flight share one round trip and one commit. An item that finds nothing running goes at once,
// so nothing waits when nothing else is happening.

/** Each call's promise settles with the flush that carried its item. */
export function whileBusy<T>(flush: (items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let running = false;
  let next: { items: T[]; done: Promise<void>; follow: (flushed: Promise<void>) => void } | undefined;

  function run(items: T[]): Promise<void> {
    running = true;
    return flush(items).finally(() => {
      running = false;
      const waiting = next;
      next = undefined;
      // Resolved with the next flush's promise, its callers' promises settle as that flush does.
      waiting?.follow(run(waiting.items));
    });
  }

  return (item) => {
    if (!running) return run([item]);
    if (next === undefined) {
      let follow: (flushed: Promise<void>) => void = () => {};
      const done = new Promise<void>((resolve) => {
        follow = resolve;
      });
      next = { items: [], done, follow };
    }
    next.items.push(item);
    return next.done;
  };
}
