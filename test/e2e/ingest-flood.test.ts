import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlaylineClient } from '../../src/client/index.js';
import { signV4 } from '../../src/platform/auth/v4-signature.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const MAX_BODY = 16 * 1024 * 1024;
const dataDir = mkdtempSync(join(tmpdir(), 'playline-ingest-flood-'));
let server: ServerProcess | undefined;
after(async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) await server.kill9();
  rmSync(dataDir, { recursive: true, force: true });
});

/** 16 MiB of junk (short lines, and lines long enough to be decoded) around a few good events. */
const floodBody = (owner: string, n: number): Buffer => {
  const good = Array.from({ length: 50 }, (_, i) => JSON.stringify({ type: 'start', owner, asset_id: `flood-${n}`, session_id: `s${i}` })).join('\n');
  const junk = n % 2 === 0 ? 'x\n' : '{"type":"start","owner":"somebody","asset_id":"a","session_id":\n';
  const head = Buffer.from(`${good}\n`);
  return Buffer.concat([head, Buffer.alloc(MAX_BODY - head.length, junk)]);
};

test('concurrent maximum-size junk batches: the process survives and answers each 202 or 503 + Retry-After', { timeout: 180_000 }, async (t) => {
  server = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir });
  const { owner, key: apiKey } = bootstrapCredentials(server);
  const { msg, sig } = signV4(owner, apiKey, Math.floor(Date.now() / 1000));
  const url = `${server.url}/api/v4/monitoring/events?msg=${encodeURIComponent(msg)}&sig=${sig}`;
  const answers = await Promise.all(
    Array.from({ length: 8 }, async (_, n) => {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: floodBody(owner, n) }).catch(
        (err: unknown) => ({ status: 0, headers: new Headers(), text: () => Promise.resolve(String(err)) }),
      );
      return { n, status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
    }),
  );
  t.diagnostic(`answers: ${answers.map((a) => a.status).join(' ')}`);
  const client = new PlaylineClient({ baseUrl: server.url, owner, apiKey });
  assert.equal((await fetch(`${server.url}/healthz`)).status, 200, 'the process is alive');
  assert.equal(server.child.exitCode, null);
  for (const answer of answers) {
    if (answer.status === 202) {
      const result = JSON.parse(answer.body) as { accepted: number; rejected: unknown[]; rejected_count: number };
      assert.equal(result.accepted, 50);
      assert.equal(result.rejected.length, 100);
      assert.equal((await client.vodStats.asset(`flood-${answer.n}`)).stats.sessions.new, 50, 'accepted means counted');
    } else {
      // Refused before its body was read (the connection is closed; fetch may see that as a failure).
      assert.ok(answer.status === 503 || answer.status === 0, `batch ${answer.n}: ${answer.status} ${answer.body.slice(0, 200)}`);
      if (answer.status === 503) assert.equal(answer.retryAfter, '1');
      await assert.rejects(client.vodStats.asset(`flood-${answer.n}`), { status: 404 });
    }
  }
  assert.ok(answers.some((a) => a.status === 202), 'at least one batch got through');
  assert.equal(await server.stop(), 0, 'and it still shuts down cleanly');
});
