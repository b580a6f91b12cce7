import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testRedis } from '../../../test/helpers/redis.js';
import { ChangeFeed } from './change-feed.js';
import { eventually } from '../../../test/helpers/eventually.js';

const redis = await testRedis();
after(() => redis.cleanup());

describe('change feed over Redis pub/sub', { skip: redis.skip }, () => {
  test('a change published by one instance reaches the others, not itself, per topic', async () => {
    const prefix = `${redis.prefix()}feed:`;
    const feedOf = (instanceId: string) => new ChangeFeed({ publisher: redis.client(), subscriber: redis.client(), prefix, instanceId });
    const [a, b, c] = [feedOf('a'), feedOf('b'), feedOf('c')];
    const seen: string[] = [];
    for (const [name, feed] of [['a', a], ['b', b], ['c', c]] as const) {
      await feed.subscribe('callback-settings', (payload, from) => seen.push(`${name}<-${from}:${payload}`));
    }
    await c.subscribe('other-topic', (payload) => seen.push(`c<-other:${payload}`));
    assert.equal(await a.publish('callback-settings', 'ws-1'), 3, 'three subscribers on the channel');
    await eventually(() => seen.length >= 2, 'delivery');
    assert.deepEqual(seen.sort(), ['b<-a:ws-1', 'c<-a:ws-1']);
    await Promise.all([a.close(), b.close(), c.close()]);
  });
});
