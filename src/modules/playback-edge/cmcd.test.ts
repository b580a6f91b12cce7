import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cmcdSignals, splitCmcdQuery } from './cmcd.js';

// What hls.js 1.x appends with `cmcd: {}`: its CMCD keys, URL-encoded, after everything else.
const HLSJS = 'CMCD=bl%3D11700%2Cbr%3D1200%2Cbs%2Ccid%3D%22movie-1%22%2Cd%3D4004%2Cmtp%3D16600%2Cot%3Dv%2Csf%3Dh%2Csid%3D%226e2fb550-c457-11e9-bb97-0800200c9a66%22%2Csu';

test('the CMCD parameter is split off byte for byte, wherever it is; a query without it is untouched', () => {
  const signed = 'tc=1&exp=1795000060&rn=n&ct=a&cid=movie%2D1&oid=o&sig=ab12';
  assert.deepEqual(splitCmcdQuery(`${signed}&${HLSJS}`), { query: signed, cmcd: HLSJS.slice(5) });
  assert.deepEqual(splitCmcdQuery(`${HLSJS}&${signed}`), { query: signed, cmcd: HLSJS.slice(5) });
  assert.deepEqual(splitCmcdQuery(signed), { query: signed, cmcd: undefined });
  assert.deepEqual(splitCmcdQuery('CMCDX=1&a=CMCD'), { query: 'CMCDX=1&a=CMCD', cmcd: undefined }, 'only the parameter named CMCD');
});

test('query CMCD as hls.js sends it gives the player sid and the buffer starvation flag', () => {
  assert.deepEqual(cmcdSignals(splitCmcdQuery(HLSJS).cmcd, {}), { sid: '6e2fb550-c457-11e9-bb97-0800200c9a66', bufferStarved: true });
  assert.deepEqual(cmcdSignals(undefined, {}), { bufferStarved: false });
});

test('CMCD headers are read too; malformed CMCD is ignored, never an error', () => {
  const headers = { 'cmcd-session': 'cid="movie-1",sid="player-session-1"', 'cmcd-status': 'bs', 'cmcd-object': 'd=4004,ot=v' };
  assert.deepEqual(cmcdSignals(undefined, headers), { sid: 'player-session-1', bufferStarved: true });
  assert.deepEqual(cmcdSignals('%E0%A4%A', { 'cmcd-session': 'sid=' }), { bufferStarved: false });
  assert.deepEqual(cmcdSignals(encodeURIComponent('sid="x",,,=bs'), {}).bufferStarved, false);
});
