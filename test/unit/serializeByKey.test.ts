import { describe, expect, it } from 'vitest';
import { keyedSerializer } from '../../src/events/serializeByKey.js';

/** A task that stays open until the test ends it, recording when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  let fail!: (err: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    open = () => resolve(name);
    fail = reject;
  });
  return {
    task: () => {
      log.push(`start ${name}`);
      return done;
    },
    open,
    fail,
  };
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A serializer, the log of task starts, and two closed gates of these names. */
function setup(first: string, second: string) {
  const log: string[] = [];
  return { serializer: keyedSerializer(), log, a: gate(log, first), b: gate(log, second) };
}

describe('keyed serializer', () => {
  it.each([
    {
      settles: 'returns',
      settle: (task: ReturnType<typeof gate>) => task.open(),
      outcome: (run: Promise<string>) => expect(run).resolves.toBe('first'),
    },
    {
      settles: 'fails',
      settle: (task: ReturnType<typeof gate>) => task.fail(new Error('S/4HANA down')),
      outcome: (run: Promise<string>) => expect(run).rejects.toThrow('S/4HANA down'),
    },
  ])(
    'starts the next task of a key only once the one before it $settles, which hands its caller its own outcome',
    async ({ settle, outcome }) => {
      const { serializer, log, a: first, b: second } = setup('first', 'second');
      const a = serializer.run('order-1', first.task);
      const b = serializer.run('order-1', second.task);
      await tick();
      expect(log).toEqual(['start first']);
      settle(first);
      await outcome(a);
      await tick();
      expect(log).toEqual(['start first', 'start second']);
      second.open();
      await expect(b).resolves.toBe('second');
    },
  );

  it('runs tasks of different keys at the same time', async () => {
    const { serializer, log, a: one, b: two } = setup('one', 'two');
    const a = serializer.run('order-1', one.task);
    const b = serializer.run('order-2', two.task);
    await tick();
    expect(log).toEqual(['start one', 'start two']);
    two.open();
    one.open();
    await Promise.all([a, b]);
  });

  it('forgets a key once its last task has settled', async () => {
    const { serializer, a: first, b: second } = setup('first', 'second');
    const a = serializer.run('order-1', first.task);
    const b = serializer.run('order-1', second.task);
    expect(serializer.size()).toBe(1);
    first.open();
    second.fail(new Error('gone'));
    await a;
    await expect(b).rejects.toThrow('gone');
    await tick();
    expect(serializer.size()).toBe(0);
  });
});
