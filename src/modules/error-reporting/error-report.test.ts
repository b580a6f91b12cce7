import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { boundedReport, ErrorReportSchema, sampleReport } from './error-report.js';

// issue 36: the payload carried the HTTP status (403) but not the playback error code (110).
test('the report sent carries the playback error code beside the HTTP status; the other fields are kept', () => {
  const sent = boundedReport({ owner: 'ws1', url: 'https://edge/x.m3u8', ip: '203.0.113.5', code: 403, ua: 'P/1', msg: 'Invalid token signature', timestamp: 1, errorCode: 110 });
  assert.deepEqual(sent, { owner: 'ws1', subtype: 'web', url: 'https://edge/x.m3u8', ip: '203.0.113.5', code: 403, ua: 'P/1', msg: 'Invalid token signature', timestamp: 1, error_code: 110 });
  assert.ok(Value.Check(ErrorReportSchema, sent));
  assert.equal(boundedReport({ owner: 'ws1', url: 'u', ip: 'i', code: 500, ua: 'u', msg: 'm', timestamp: 1 }).error_code, 999, 'a producer without a code: unknown');
  assert.ok(Value.Check(ErrorReportSchema, sampleReport('ws1', Date.now())), 'the test POST has the same shape');
});
