import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from './config.js';
import { UnwiredPortError, Wiring } from './wiring.js';

test('a port wired to something is written in the table, modules and ports sorted', () => {
  const wiring = new Wiring();
  const sink = { emit: () => undefined };
  assert.equal(wiring.port('syndication', 'events', sink, 'webhooks'), sink, 'the value is handed back for the deps');
  wiring.port('assets', 'metrics', { registry: 1 }, 'prometheus registry');
  wiring.port('assets', 'events', sink, 'webhooks');
  wiring.port('syndication', 'resume on start', false, 'none'); // false is a wiring, not a missing one
  wiring.check();
  assert.deepEqual(wiring.describe(), { assets: { events: 'webhooks', metrics: 'prometheus registry' }, syndication: { events: 'webhooks', 'resume on start': 'none' } });
  assert.deepEqual(Object.keys(wiring.describe()), ['assets', 'syndication']);
});

test('the start-up check refuses an unwired production port, naming each one (a ConfigError: the CLI prints it, no stack)', () => {
  const wiring = new Wiring();
  wiring.port('assets', 'events', undefined, 'webhooks');
  wiring.port('syndication', 'events', { emit: () => undefined }, 'webhooks');
  wiring.port('playback-edge', 'metrics', null, 'prometheus registry');
  assert.throws(() => wiring.check(), (err: unknown) => {
    assert.ok(err instanceof UnwiredPortError);
    assert.ok(err instanceof ConfigError);
    assert.deepEqual(err.ports, ['assets.events', 'playback-edge.metrics']);
    assert.match(err.message, /refusing to start: production ports not wired: assets\.events, playback-edge\.metrics/);
    return true;
  });
  assert.equal(wiring.describe().assets?.events, 'UNWIRED');
});
