import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, REDACTED } from './logger.js';
import { isSecretField, SECRET_FIELDS } from './secret-fields.js';
import { secretFieldNames } from '../modules/syndication/target-secrets.js';

const capture = () => {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } };
};

test('a module logger (a child of the root) redacts secrets at the top and one level down, and keeps the base fields', () => {
  const { lines, destination } = capture();
  const root = createLogger({ level: 'info', bindings: { instance: 'host:1:abcd' }, destination });
  const log = root.child({ module: 'syndication' });
  log.info({ password: 'p4ss', target: { target_stream: 'live_key', stream_id: 'sid', secret: 's3cret', port: 1935 }, headers: { authorization: 'Bearer x' } }, 'saved');
  assert.equal(lines.length, 1);
  const line = lines[0] as Record<string, unknown>;
  assert.deepEqual(
    { password: line.password, target: line.target, headers: line.headers },
    { password: REDACTED, target: { target_stream: REDACTED, stream_id: REDACTED, secret: REDACTED, port: 1935 }, headers: { authorization: REDACTED } },
  );
  assert.deepEqual([line.module, line.instance, line.pid, line.msg], ['syndication', 'host:1:abcd', process.pid, 'saved']);
  assert.doesNotMatch(JSON.stringify(lines), /p4ss|live_key|sid"|s3cret|Bearer x/);
});

test('stream keys, SRT/RIST passphrases and every other field of the one secret list are redacted, at the top and one level down', () => {
  const { lines, destination } = capture();
  const log = createLogger({ level: 'info', destination }).child({ module: 'managed-slicers' });
  const clear = Object.fromEntries(SECRET_FIELDS.map((field, i) => [field, `clear-${i}-value`]));
  log.info({ ...clear, slicer: { ...clear, id: 'abc' } }, 'starting');
  const line = lines[0] as Record<string, unknown>;
  for (const field of SECRET_FIELDS) {
    assert.equal(line[field], REDACTED, field);
    assert.equal((line.slicer as Record<string, unknown>)[field], REDACTED, `slicer.${field}`);
  }
  assert.equal((line.slicer as Record<string, unknown>).id, 'abc');
  assert.doesNotMatch(JSON.stringify(lines), /clear-\d+-value/);
  // The fields issue 42 found in neither list.
  for (const field of ['stream_key', 'streamKey', 'passphrase']) assert.ok(isSecretField(field), field);
});

test('the publishing targets\' secret fields are names of the one list', () => {
  for (const field of secretFieldNames) assert.ok(isSecretField(field), field);
});

test('the level comes from the settings: silent writes nothing, debug writes debug lines', () => {
  const silent = capture();
  createLogger({ level: 'silent', destination: silent.destination }).child({ module: 'x' }).error('not written');
  assert.equal(silent.lines.length, 0);
  const debug = capture();
  createLogger({ level: 'debug', destination: debug.destination }).child({ module: 'x' }).debug('written');
  assert.deepEqual(debug.lines.map((l) => [l.level, l.msg]), [[20, 'written']]);
});

test('a logged request shows its path without the query string (msg, sig and playback tokens stay out)', () => {
  const { lines, destination } = capture();
  const req = { method: 'GET', url: '/api/v4/workspace?msg=eNq&sig=c77a', ip: '127.0.0.1' };
  createLogger({ level: 'info', destination }).info({ req }, 'incoming request');
  assert.deepEqual(lines[0]?.req, { method: 'GET', url: '/api/v4/workspace', remoteAddress: '127.0.0.1' });
});

test('a logged hls push request shows its path without the token of the ingest URL', () => {
  const { lines, destination } = capture();
  const req = { method: 'PUT', url: '/ingest/hls/ws1/sl1/c2VjcmV0LXRva2Vu/seg3.ts', ip: '127.0.0.1' };
  createLogger({ level: 'info', destination }).info({ req }, 'incoming request');
  assert.deepEqual(lines[0]?.req, { method: 'PUT', url: '/ingest/hls/ws1/sl1/********/seg3.ts', remoteAddress: '127.0.0.1' });
});

/**
 * The JSON lines a fresh process writes to stdout when it runs `body` with the server logger
 * (`createLogger({ level: 'info' })` as `log`, its line sink as `sink`) and then exits at once.
 */
const serverLogOf = async (body: string): Promise<Array<Record<string, unknown>>> => {
  const { execFile } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const logger = fileURLToPath(new URL('./logger.ts', import.meta.url));
  const script = `
    const { createLogger, lineSinkOf } = await import(${JSON.stringify(logger)});
    const log = createLogger({ level: 'info' });
    const sink = lineSinkOf(log);
    ${body}`;
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { maxBuffer: 16 << 20 }, (err, out) => (err ? reject(err) : resolve(out))),
  );
  return stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
};

test('hand-built lines on the server log (stdout) are held back and still all written when the process exits at once', async () => {
  const lines = await serverLogOf(`
    setImmediate(() => {
      for (let i = 0; i < 3; i++) sink.write('{"n":' + i + sink.base + '}\\n');
      log.info('after');
      process.exit(0);
    });`);
  assert.deepEqual(lines.filter((l) => 'n' in l).map((l) => [l.n, l.pid === undefined]), [[0, false], [1, false], [2, false]]);
  assert.ok(lines.some((l) => l.msg === 'after'));
});

test('held lines reach the server log whole and in order across many chunks, with non-ASCII text and a line longer than a chunk among them', async () => {
  const lines = await serverLogOf(`
    for (let i = 0; i < 3000; i++) {
      const text = i === 1500 ? 'x'.repeat(70000) : 'caf\u00e9 \u2713 \ud83d\ude00 ' + i;
      sink.write(JSON.stringify({ n: i, text }) + '\\n');
      if (i === 2000) log.info('between');
    }
    process.exit(0);`);
  const held = lines.filter((l) => 'n' in l);
  assert.deepEqual(held.map((l) => l.n), Array.from({ length: 3000 }, (_, i) => i));
  assert.equal(held[7]?.text, 'caf\u00e9 \u2713 \ud83d\ude00 7');
  assert.equal((held[1500]?.text as string).length, 70000);
  assert.ok(lines.some((l) => l.msg === 'between'));
});
