import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { systemClock } from '../../src/platform/clock.js';
import { startLocalReceiver, type LocalReceiver, type ReceivedCallback } from '../../src/platform/outbound/testing/local-receiver.js';

const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');

/** The first fenced code block (of `lang`) after the heading `heading`, exactly as written in the doc. */
const codeAfter = (heading: string, lang: string): string => {
  const start = doc.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `docs/webhooks.md has "${heading}"`);
  const match = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(doc.slice(start));
  assert.ok(match?.[1], `a ${lang} block under "${heading}"`);
  return `${match[1]}\n`;
};

const examples = {
  shell: { file: 'verify.sh', code: codeAfter('### Shell (openssl)', 'sh'), command: 'sh' },
  node: { file: 'verify.mjs', code: codeAfter('### Node.js', 'js'), command: process.execPath },
  python: { file: 'verify.py', code: codeAfter('### Python', 'python'), command: 'python3' },
};

/** Runs a script with the body on stdin; resolves with its stdout. */
const runWithStdin = (command: string, args: string[], env: Record<string, string>, cwd: string, stdin: Buffer | string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = execFile(command, args, { cwd, env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message} ${stderr}`));
      else resolve(stdout);
    });
    child.stdin?.end(stdin);
  });

// A real delivery from the service (signed with the real time, which the examples check), then each
// example of docs/webhooks.md run as written: valid for it, invalid with one byte of the body changed.
describe('docs/webhooks.md: the verification examples against a real delivery', () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  let dir: string;
  before(async () => {
    t = await createTestApp({ clock: systemClock, env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
    dir = mkdtempSync(join(tmpdir(), 'playline-webhooks-doc-'));
    for (const example of Object.values(examples)) writeFileSync(join(dir, example.file), example.code);
  });
  after(async () => {
    await t.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const deliver = async (): Promise<ReceivedCallback> => {
    const n = receiver.count();
    t.runtime.errorReports.submit({ owner: t.workspace.id, url: 'https://edge.example.com/play/a1.m3u8?exp=1', ip: '198.51.100.23', code: 403, ua: 'Plâyer/3 ✓', msg: 'Expired token', timestamp: Math.floor(Date.now() / 1000), errorCode: 104 });
    await receiver.waitFor(n + 1);
    const got = receiver.received[n];
    assert.ok(got);
    return got;
  };

  const verdicts = async (secret: string, got: ReceivedCallback, body: string) => {
    const env = {
      WEBHOOK_SECRET: secret,
      WEBHOOK_ID: String(got.headers['webhook-id']),
      WEBHOOK_TIMESTAMP: String(got.headers['webhook-timestamp']),
      WEBHOOK_SIGNATURE: String(got.headers['webhook-signature']),
    };
    const out: Record<string, string> = {};
    for (const [name, example] of Object.entries(examples)) {
      out[name] = (await runWithStdin(example.command, [example.file], env, dir, Buffer.from(body, 'utf8'))).trim();
    }
    return out;
  };
  const all = (verdict: string) => ({ shell: verdict, node: verdict, python: verdict });

  test('each example says valid for the real delivery and invalid for a tampered body or another secret', { timeout: 60_000 }, async () => {
    const { signing_secret: secret } = await t.client.errorReporting.putSettings({ callback_url: receiver.url });
    const got = await deliver();
    assert.match(got.body, /Plâyer\/3 ✓/, 'a body with non-ASCII characters (bytes, not characters, are signed)');
    assert.deepEqual(await verdicts(secret, got, got.body), all('valid'));
    assert.deepEqual(await verdicts(secret, got, got.body.replace('"code":403', '"code":404')), all('invalid'));
    const other = (await t.other.client.errorReporting.getSettings()).signing_secret;
    assert.deepEqual(await verdicts(other, got, got.body), all('invalid'));
  });

  test('after a rotation (two signatures in the header) both secrets verify', { timeout: 60_000 }, async () => {
    const before = (await t.client.errorReporting.getSettings()).signing_secret;
    const rotated = (await t.client.errorReporting.rotateSecret()).signing_secret;
    const got = await deliver();
    assert.equal(String(got.headers['webhook-signature']).split(' ').length, 2);
    assert.deepEqual(await verdicts(rotated, got, got.body), all('valid'));
    assert.deepEqual(await verdicts(before, got, got.body), all('valid'));
    assert.deepEqual(await verdicts(rotated, got, `${got.body} `), all('invalid'));
  });

  test('the curl replay example sends the logged request byte for byte, and it still verifies', { timeout: 60_000 }, async () => {
    const secret = (await t.client.errorReporting.getSettings()).signing_secret;
    await deliver();
    const { items } = await t.client.errorReporting.listAttempts({ limit: 1 });
    const logged = await t.client.errorReporting.getAttempt(items[0]?.id ?? '');
    writeFileSync(join(dir, 'replay.sh'), codeAfter('### Replaying a logged delivery at your receiver (curl)', 'sh'));
    const n = receiver.count();
    const { headers } = logged.request;
    const env = { RECEIVER_URL: receiver.url, WEBHOOK_ID: headers['webhook-id'], WEBHOOK_TIMESTAMP: headers['webhook-timestamp'], WEBHOOK_SIGNATURE: headers['webhook-signature'] };
    assert.equal((await runWithStdin('sh', ['replay.sh'], env, dir, logged.request.body)).trim(), '200');
    const replayed = receiver.received[n];
    assert.equal(replayed?.body, logged.request.body);
    assert.equal(replayed.headers['webhook-signature'], headers['webhook-signature']);
    assert.deepEqual(await verdicts(secret, replayed, replayed.body), all('valid'));
  });
});
