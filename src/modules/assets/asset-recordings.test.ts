import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { assetDir } from '../../platform/media/media-layout.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { playbackOf } from '../playback-edge/testing/content-share-kit.js';
import { testEdge } from '../playback-edge/testing/edge-test-kit.js';
import { writeFakeAsset } from '../playback-edge/testing/media-fixtures.js';

/**
 * A recorded live event is an asset of its slicer's workspace like any other: listed by slicer,
 * played through the signed edge by its owner, and private (another workspace neither sees nor
 * plays it without a share).
 */
describe('recorded live events in the library', () => {
  let t: TestApp;
  let owner: string;
  let recordingId: string;

  before(async () => {
    const edge = testEdge();
    t = await createTestApp({ overrides: { playbackEdge: { ...edge.overrides } } });
    owner = t.other.workspace.id;
    const root = mediaRootOf(t.runtime.config);
    // A finished recording's directory (manifest, poster, renditions) in the media root, as the recorder leaves it.
    await writeFakeAsset(root, 'staging', 'finished');
    const asset = await t.runtime.assets.service.adoptRecording({
      workspaceId: owner, slicerId: 'slicer-1', title: 'Keynote 2026-11-28 08:00:00 UTC', dir: assetDir(root, 'staging', 'finished'),
      startedAt: Date.UTC(2026, 10, 28, 8), endedAt: Date.UTC(2026, 10, 28, 8, 0, 10), durationMs: 10_000,
      renditions: [{ name: '360p', width: 640, height: 360, bandwidth: 900_000 }], storedBytes: 4096,
    });
    recordingId = asset.id;
  });
  after(() => t.close());

  test('listed with its slicer and times; ready; the filter by slicer finds only its recordings', async () => {
    const shown = await t.other.client.assets.get(recordingId);
    assert.deepEqual(
      [shown.state, shown.source_slicer_id, shown.recording_started_at, shown.recording_ended_at, shown.duration_s, shown.size_bytes],
      ['ready', 'slicer-1', Date.UTC(2026, 10, 28, 8) / 1000, Date.UTC(2026, 10, 28, 8, 0, 10) / 1000, 10, 4096],
    );
    assert.deepEqual((await t.other.client.assets.list({ source_slicer_id: 'slicer-1' })).page.items.map((a) => a.id), [recordingId]);
    assert.deepEqual((await t.other.client.assets.list({ source_slicer_id: 'slicer-2' })).page.items, []);
    assert.ok(((await t.other.client.workspace.usage()).storage.by_source.assets ?? 0) >= 4096, 'its bytes count in the storage quota');
  });

  test('abuse: another workspace does not see it (404, not listed, even by its slicer id) nor play it (102)', async () => {
    await assert.rejects(t.client.assets.get(recordingId), (err: { status?: number }) => err.status === 404);
    assert.deepEqual((await t.client.assets.list({ source_slicer_id: 'slicer-1' })).page.items, []);
    assert.equal((await playbackOf(t, t.other.client, recordingId)).status, 200, 'its owner plays it through the signed edge');
    const refused = await playbackOf(t, t.client, recordingId, { coid: owner });
    assert.deepEqual([refused.status, refused.code], [403, '102']);
  });
});
