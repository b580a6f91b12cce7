import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { FakeClock } from '../../platform/clock.js';
import { freePort } from '../../../test/helpers/media-receiver.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import type { ListenProtocol } from './ingest-endpoint.js';
import { listenerSources, type SlicerSource, type SourceAdmission } from './slicer-source.js';

/**
 * Every listening protocol's source takes its verdicts and key material from the live event's
 * admission, none from its own copy of the key: the wiring mutation "one ingest protocol without
 * the admission check" fails here for whichever protocol it hits.
 */
const skip = await mediaToolsSkip();
const KEY_MATERIAL = 'AdmissionKey_0123456789abcdef';
const sources: SlicerSource[] = [];
after(async () => {
  for (const s of sources) await s.close();
});

/** An admission that refuses every presented key and records what it was asked. */
const recordingAdmission = () => {
  const asked: Array<[string, string]> = [];
  let keyMaterialAsked = 0;
  const admission: SourceAdmission = {
    admit: (key, remoteAddress) => {
      asked.push([key, remoteAddress]);
      return false;
    },
    keyMaterial: () => {
      keyMaterialAsked++;
      return KEY_MATERIAL;
    },
    refused: () => undefined,
  };
  return { admission, asked, keyMaterialAsked: () => keyMaterialAsked };
};

const open = async (protocol: ListenProtocol, admission: SourceAdmission) => {
  const port = await freePort(protocol === 'rtmp' ? 'tcp' : 'udp');
  const source = await listenerSources[protocol]({ bindHost: '127.0.0.1', port, clock: new FakeClock(), admission, onRefused: () => undefined });
  sources.push(source);
  return { source, port };
};

for (const protocol of ['srt', 'rist'] as const) {
  test(`${protocol}: ffmpeg's keyed listener gets the key material from the admission`, { skip }, async () => {
    const { admission, keyMaterialAsked } = recordingAdmission();
    const { source } = await open(protocol, admission);
    const input = await source.input(new AbortController().signal, false);
    try {
      assert.equal(keyMaterialAsked(), 1);
      const script = await readFile(input.args.at(-1) as string, 'utf8');
      assert.match(script, new RegExp(`option ${protocol === 'srt' ? 'passphrase' : 'secret'} ${KEY_MATERIAL}\\n`));
    } finally {
      await input.close?.();
    }
  });
}

test('rtmp: the ingest front asks the admission with the stream name and the encoder\'s address, and refuses when it says no', { skip, timeout: 60_000 }, async () => {
  const { admission, asked } = recordingAdmission();
  const { port } = await open('rtmp', admission);
  const encoder = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'quiet', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=25', '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'flv', `rtmp://127.0.0.1:${port}/live/${KEY_MATERIAL}`], { stdio: 'ignore' });
  const code = await new Promise<number | null>((resolve) => encoder.once('exit', resolve));
  assert.notEqual(code, 0, 'refused');
  assert.deepEqual(asked, [[KEY_MATERIAL, '127.0.0.1']]);
});
