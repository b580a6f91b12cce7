import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { slicerBody, until } from '../../src/modules/managed-slicers/slicer-fixtures.test-support.js';

/** The runtime's one logger: request lines and module lines reach the same destination, with the same base fields. */
describe('one logger for the app and every module', () => {
  const lines: Array<Record<string, unknown>> = [];
  const clock = new FakeClock();
  let t: TestApp;
  before(async () => {
    t = await createTestApp({
      clock,
      env: { PLAYLINE_LOG_LEVEL: 'info', PLAYLINE_SLICER_PROVISION_MS: '1000' },
      logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
  });
  after(() => t.close());

  test('a request line and a module line come from one root (same pid and hostname), the module line names its module', async () => {
    const created = await t.client.managedSlicers.create(slicerBody('Logged'));
    const runner = t.runtime.managedSlicers.runner;
    await until(() => runner.runningTaskIds().length > 0, 'the task running');
    clock.advance(1000);
    await until(() => lines.some((l) => l.msg === 'slicer task completed'), 'the task completed and logged');

    const request = lines.find((l) => l.msg === 'incoming request' && (l.req as { url?: string } | undefined)?.url === '/api/v4/managed-slicer/slicers');
    const completed = lines.find((l) => l.msg === 'slicer task completed');
    assert.ok(request, 'Fastify logs through the runtime logger');
    assert.ok(completed);
    assert.equal(completed.module, 'managed-slicers');
    assert.equal(completed.taskId, created.task.id);
    assert.deepEqual([completed.pid, completed.hostname], [request.pid, request.hostname]);
    assert.doesNotMatch(JSON.stringify(lines), /sig=|msg=/, 'no query string is logged');
  });
});
