/** Runs `task` once every earlier task of the same key has settled; tasks of other keys do not wait. */
export type SerializeByKey = <T>(key: string, task: () => Promise<T>) => Promise<T>;

export interface KeyedSerializer {
  run: SerializeByKey;
  /** Keys with a task queued or running: for tests, to see that settled keys are forgotten. */
  size(): number;
}

/**
 * One queue per key, kept only while it has work: the map holds the tail of each key's chain and forgets the
 * key when its last task settles. A task's failure is its caller's; the next task of the key runs regardless.
 */
export function keyedSerializer(): KeyedSerializer {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run(key, task) {
      const current = (tails.get(key) ?? Promise.resolve()).then(task);
      const tail = current.catch(() => {});
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return current;
    },
    size: () => tails.size,
  };
}
