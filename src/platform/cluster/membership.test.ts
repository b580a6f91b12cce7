import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testRedis } from '../../../test/helpers/redis.js';
import { FakeClock } from '../clock.js';
import { Membership, type Member } from './membership.js';

const redis = await testRedis();
after(() => redis.cleanup());

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Instances of one cluster: one Redis prefix, one fake clock. */
const clusterOf = () => {
  const clock = new FakeClock(Date.UTC(2026, 10, 21, 10, 0));
  const prefix = `${redis.prefix()}cluster:`;
  const client = redis.client();
  const member = (id: string) => new Membership({ redis: client, prefix, instanceId: id, clock, log: silent });
  return { clock, member, client, prefix };
};

describe('cluster membership over Redis', { skip: redis.skip }, () => {
  test('each heartbeat carries what modules report; stop leaves the registry unless a module still holds work', async () => {
    const { member, clock } = clusterOf();
    const a = member('a');
    const b = member('b');
    let counted = 5;
    let holding = true;
    a.report('countedBefore', () => counted);
    a.stayListedWhile(() => holding);
    await a.presence.start();
    await b.presence.start();
    assert.deepEqual(await b.members(), [
      { id: 'a', beatAt: clock.now(), alive: true, report: { countedBefore: 5 } },
      { id: 'b', beatAt: clock.now(), alive: true, report: {} },
    ]);
    clock.advance(1_000);
    counted = 7;
    await a.presence.stop();
    const stayed = (await b.members()).find((m) => m.id === 'a');
    assert.deepEqual([stayed?.beatAt, stayed?.report], [clock.now(), { countedBefore: 7 }], 'a last beat: a survivor takes over what it holds');
    holding = false;
    await a.presence.stop();
    assert.deepEqual((await b.members()).map((m) => m.id), ['b']);
  });

  test('a dead instance is taken over once and removed; busy tries again at the next heartbeat; the live count is told', async () => {
    const { member, clock } = clusterOf();
    const dead = member('dead');
    const survivor = member('survivor');
    await dead.presence.start();
    const takenFrom: Member[] = [];
    let busy = true;
    survivor.onDead(async (m) => {
      takenFrom.push(m);
      return busy ? 'busy' : { batches: 3 };
    });
    const alive: number[] = [];
    survivor.onMembers((n) => alive.push(n));
    await survivor.tick();
    assert.deepEqual([takenFrom.length, alive], [0, [2]], 'a live instance is left alone');
    clock.advance(15_000);
    await survivor.tick();
    assert.deepEqual([takenFrom.map((m) => m.id), alive], [['dead'], [2, 1]], 'silent for 15 s: dead');
    busy = false;
    await survivor.tick();
    assert.equal(takenFrom.length, 2, 'busy released the sweep lock: tried again');
    assert.deepEqual((await survivor.members()).map((m) => m.id), ['survivor']);
    await survivor.tick();
    assert.equal(takenFrom.length, 2, 'taken over once');
  });

  test('an elected chore runs on one instance per period; a due chore runs whenever due, never twice at once', async () => {
    const { member } = clusterOf();
    const [a, b] = [member('a'), member('b')];
    const started: string[] = [];
    let finish: () => void = () => undefined;
    let due = true;
    for (const [name, m] of [['a', a], ['b', b]] as const) {
      m.chore({ name: 'prune', everyMs: 60_000, run: async () => void started.push(`prune@${name}`) });
    }
    a.chore({
      name: 'rebuild',
      due: async () => due,
      run: () => {
        started.push('rebuild');
        return new Promise<void>((resolve) => (finish = resolve));
      },
    });
    await a.tick();
    await b.tick();
    await a.tick();
    assert.deepEqual(started, ['prune@a', 'rebuild'], 'b lost the election; the running rebuild was not started again');
    finish();
    await a.housekeeping.stop();
    due = false;
    await a.tick();
    assert.deepEqual(started, ['prune@a', 'rebuild'], 'not due: not run');
    due = true;
    await a.tick();
    assert.deepEqual(started, ['prune@a', 'rebuild', 'rebuild'], 'due again once the last run finished');
    finish();
    await a.housekeeping.stop();
  });
});
