import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signV4 } from '../../src/platform/auth/v4-signature.js';
import { bootstrapCredentials, startServerProcess } from '../helpers/server-process.js';

/**
 * issue 36: Ctrl-C of the server during an upload waited out the whole shutdown grace, exited 1
 * and never stopped the runtime (slicers' ffmpeg left for the next start to clean up).
 */
describe('Ctrl-C of playline serve while an upload is still sending', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-shutdown-upload-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('cuts the upload, closes the runtime (the data directory lock released) and exits 0', { timeout: 240_000 }, async () => {
    // A grace far longer than the test may wait: before the fix the process sat in it, then exited 1.
    const server = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir, PLAYLINE_SHUTDOWN_GRACE_MS: '600000' });
    const { owner, key } = bootstrapCredentials(server);
    const { msg, sig } = signV4(owner, key, Math.floor(Date.now() / 1000));
    const upload = request(`${server.url}/api/v4/assets?msg=${encodeURIComponent(msg)}&sig=${sig}`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(64 * 1024 * 1024) },
    });
    const uploadEnded = new Promise<string>((resolve) => {
      upload.once('error', (err) => resolve(`error ${(err as NodeJS.ErrnoException).code ?? err.message}`));
      upload.once('response', (res) => resolve(`status ${res.statusCode ?? 0}`));
    });
    // The first MiB, then the upload stalls mid-body, as a slow link does.
    await new Promise<void>((resolve) => upload.write(Buffer.alloc(1024 * 1024), () => resolve()));
    assert.ok(existsSync(join(dataDir, 'server.pid')), 'the running server holds the lock (its pid file)');
    // The helper lets its children go unreferenced between its own waits: this wait holds the loop itself.
    server.child.ref();
    const exited = once(server.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    server.child.kill('SIGINT');
    const [code] = await exited;
    assert.equal(code, 0, server.output());
    assert.ok(!existsSync(join(dataDir, 'server.pid')), 'the runtime was closed (its lock released, the pid file removed)');
    assert.match(await uploadEnded, /^(error|status)/);
  });
});
