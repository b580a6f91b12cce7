import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterPair, clusterPairProblem, type ClusterPair } from '../../../test/helpers/cluster-pair.js';
import { makeClip, mediaToolsSkip } from '../../../test/helpers/media.js';
import { assetDir } from '../../platform/media/media-layout.js';

const skip = (await clusterPairProblem()) || (await mediaToolsSkip());

describe('asset library in cluster mode (two instances, one PostgreSQL, one media directory)', { skip }, () => {
  let pair: ClusterPair;
  let scratch: string;
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-assets-cluster-'));
    pair = await clusterPair({ env: { PLAYLINE_MEDIA_DIR: join(scratch, 'media'), PLAYLINE_PACKAGING_LADDER: '144p', PLAYLINE_PACKAGING_PRESET: 'ultrafast' } });
  });
  after(async () => {
    await pair.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('an upload to one instance is packaged once (leased in PostgreSQL) and served by the other', async () => {
    const clip = await makeClip(scratch, 'clip.mp4', { seconds: 2 });
    // Each test app has its own workspace; the second instance reads the first's asset with its key.
    const onB = pair.b.clientFor(pair.a.workspace.id, pair.a.key.secret);
    const uploaded = await pair.a.client.assets.upload(clip, { title: 'shared' });
    const ready = await onB.assets.waitUntilPackaged(uploaded.id, { intervalMs: 20 });
    assert.equal(ready.state, 'ready', JSON.stringify(ready));
    assert.equal(pair.a.runtime.assets.files.root, pair.b.runtime.assets.files.root);
    assert.ok(existsSync(join(assetDir(join(scratch, 'media'), pair.a.workspace.id, uploaded.id), 'manifest.json')));
    const poster = await onB.core.send('GET', ready.poster ?? '');
    assert.equal(poster.status, 200);
    const deleted = await onB.assets.delete(uploaded.id);
    assert.equal(deleted.message, 'Deleted');
    assert.equal(existsSync(assetDir(join(scratch, 'media'), pair.a.workspace.id, uploaded.id)), false);
    assert.equal((await pair.a.client.core.send('GET', `/api/v4/assets/${uploaded.id}`)).status, 404);
  });
});
