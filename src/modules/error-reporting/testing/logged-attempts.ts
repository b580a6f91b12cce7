import type { PlaybackErrorReport } from '../../../platform/error-report-sink.js';
import type { LoggedAttemptDetailView } from '../error-reporting.schema.js';
import { WebhookSigner } from '../../../platform/outbound/webhook-signature.js';

/** A playback error of `owner` whose fields all derive from `code`, so a logged payload names the report it came from. */
export const playbackError = (owner: string, code: number): PlaybackErrorReport => ({
  owner,
  url: `https://edge.example.com/play/asset${code}.m3u8`,
  ip: '198.51.100.23',
  code,
  ua: 'Player/3',
  msg: `error ${code}`,
  timestamp: 1_763_719_200,
  errorCode: 104,
});

/** Whether the logged headers are a valid Standard Webhooks signature of the logged body with `secret`. */
export const verifies = (secret: string, a: LoggedAttemptDetailView): boolean => {
  const { headers, body } = a.request;
  const expected = new WebhookSigner([secret]).sign(headers['webhook-id'], Number(headers['webhook-timestamp']), body)['webhook-signature'];
  return headers['webhook-signature'].split(' ').includes(expected);
};
