import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { runMediaProcess, succeeded } from './media-process.js';
import { secretFifo } from './secret-fifo.js';

test('a reader gets the text through the named pipe; the pipe is private and gone after close', async () => {
  const fifo = await secretFifo('passphrase=kept-off-argv\n');
  assert.equal(statSync(fifo.path).mode & 0o777, 0o600);
  assert.equal(statSync(fifo.path).isFIFO(), true);
  const script = 'console.log(require("fs").readFileSync(process.argv[1], "utf8").trim())';
  const result = await runMediaProcess(process.execPath, ['-e', script, fifo.path], { collectStdout: true });
  assert.equal(succeeded(result), true);
  assert.equal(result.stdout.trim(), 'passphrase=kept-off-argv');
  assert.equal(await fifo.delivered, true);
  await fifo.close();
  assert.equal(existsSync(fifo.path), false);
});

test('closing before any reader came ends the wait without writing', async () => {
  const fifo = await secretFifo('never read');
  await fifo.close();
  assert.equal(await fifo.delivered, false);
  assert.equal(existsSync(fifo.path), false);
});
