import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterPair, clusterPairProblem, type ClusterPair } from '../../../test/helpers/cluster-pair.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { slicerBody } from '../../modules/managed-slicers/slicer-fixtures.test-support.js';
import type { WorkspaceUsageView } from '../../modules/workspaces/workspace-usage.schema.js';

const skip = await clusterPairProblem();
const noMedia = await mediaToolsSkip();
const MiB = 1024 * 1024;
const SLICERS = '/api/v4/managed-slicer/slicers';

describe('workspace quotas in cluster mode (two instances, one PostgreSQL)', { skip }, () => {
  let pair: ClusterPair;
  before(async () => {
    pair = await clusterPair({ env: { PLAYLINE_REGIONS: 'eu-central-1', PLAYLINE_QUOTA_SLICERS: '4', PLAYLINE_QUOTA_STORAGE_BYTES: String(2 * MiB) } });
  });
  after(() => pair.close());

  test('the slicer quota counts the workspace\'s slicers made through either instance; creates racing on both for the last place: exactly one wins', async () => {
    const owner = pair.a.workspace.id;
    const onB = pair.b.clientFor(owner, pair.a.key.secret);
    await pair.a.client.managedSlicers.create(slicerBody('a1'));
    await onB.managedSlicers.create(slicerBody('b1'));
    await pair.a.client.managedSlicers.create(slicerBody('a2'));
    const raced = await Promise.all([
      pair.a.client.core.send('POST', SLICERS, { body: slicerBody('race a') }),
      onB.core.send('POST', SLICERS, { body: slicerBody('race b') }),
      pair.a.client.core.send('POST', SLICERS, { body: slicerBody('race a2') }),
      onB.core.send('POST', SLICERS, { body: slicerBody('race b2') }),
    ]);
    assert.deepEqual(raced.map((r) => r.status).sort(), [201, 409, 409, 409], raced.map((r) => r.body).join('\n'));
    for (const refused of raced.filter((r) => r.status === 409)) assert.equal((JSON.parse(refused.body) as { code: string }).code, 'quota_exceeded');
    const fromA = await pair.a.client.workspace.usage();
    const fromB = await onB.workspace.usage();
    assert.deepEqual(fromA.quotas.slicers, { used: 4, limit: 4 });
    assert.deepEqual(fromB.quotas, fromA.quotas, 'both instances report the same usage');
    // Another workspace of the deployment is not held back.
    assert.equal((await pair.b.client.core.send('POST', SLICERS, { body: slicerBody('theirs') })).status, 201);
  });

  test('bytes held for an upload on one instance count on the other: an upload there that would pass the quota is 507', { skip: noMedia }, async () => {
    const owner = pair.a.workspace.id;
    const onB = pair.b.clientFor(owner, pair.a.key.secret);
    const hold = await pair.a.runtime.quotas.storage.reserve(owner, Math.floor(1.5 * MiB));
    try {
      const usage = JSON.parse((await onB.core.send('GET', '/api/v4/workspace/usage')).body) as WorkspaceUsageView;
      assert.equal(usage.storage.reserved, Math.floor(1.5 * MiB));
      const refused = await onB.core.send('POST', '/api/v4/assets', { body: Buffer.alloc(MiB, 1), contentType: 'video/mp4' });
      assert.equal(refused.status, 507, refused.body);
      assert.equal((JSON.parse(refused.body) as { code: string; used: number }).used, Math.floor(1.5 * MiB));
    } finally {
      await pair.a.runtime.quotas.storage.settle(hold);
    }
    assert.equal((await onB.workspace.usage()).storage.reserved, 0);
  });
});
