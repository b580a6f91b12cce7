import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../errors.js';
import { toProblem } from './problem.js';

const codeOf = (err: unknown) => {
  const p = toProblem(err, 'req-1');
  return `${p.status} ${p.code}`;
};

test('an unrecognised 4xx is named by its status, never taken for malformed JSON', () => {
  assert.equal(codeOf(Object.assign(new Error('x'), { statusCode: 400, code: 'FST_ERR_SOMETHING_NEW' })), '400 bad_request');
  assert.equal(codeOf(Object.assign(new Error('x'), { statusCode: 408 })), '408 request_timeout');
  assert.equal(codeOf(Object.assign(new Error('x'), { statusCode: 414 })), '414 uri_too_long');
  assert.equal(codeOf(Object.assign(new Error('x'), { statusCode: 431 })), '431 headers_too_large');
  assert.equal(codeOf(Object.assign(new Error('x'), { statusCode: 418 })), '400 bad_request');
});

test("Fastify's own errors have precise codes", () => {
  assert.equal(codeOf(Object.assign(new Error('x'), { statusCode: 400, code: 'FST_ERR_BAD_URL' })), '400 bad_url');
  assert.equal(codeOf(Object.assign(new Error('x'), { statusCode: 414, code: 'FST_ERR_MAX_PARAM_LENGTH' })), '414 uri_too_long');
  assert.equal(codeOf(Object.assign(new Error('x'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' })), '400 bad_content_length');
  assert.equal(codeOf(Object.assign(new SyntaxError('bad'), { statusCode: 400 })), '400 malformed_json');
});

test('a SyntaxError from the code itself is a 500, not the client sending bad JSON', () => {
  assert.equal(codeOf(new SyntaxError('Unexpected token')), '500 internal_error');
});

test('a write that failed for lack of space is 503 storage_full, even wrapped by a service', () => {
  const sqliteFull = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
  const pgFull = Object.assign(new Error('could not extend file'), { code: '53100' });
  const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
  for (const err of [sqliteFull, pgFull, enospc]) {
    assert.equal(codeOf(err), '503 storage_full');
    assert.equal(codeOf(new AppError('service_unavailable', 'could not journal', { cause: err })), '503 storage_full');
  }
  assert.equal(codeOf(new AppError('validation_failed', 'x', { cause: enospc })), '400 validation_failed', 'a client error stays one');
  assert.ok(!toProblem(enospc, 'r').detail.includes('ENOSPC'), 'the detail does not leak internals');
});
