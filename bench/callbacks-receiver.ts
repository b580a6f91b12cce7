/**
 * A keep-alive callback receiver in its own process for the callbacks benchmark: answers every
 * POST 200, counts them, prints `READY <url>`, and answers the IPC message `count` with the count.
 */
import { startLocalReceiver } from '../src/modules/error-reporting/testing/local-receiver.js';

const receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { keep: 0 });
process.on('message', (message) => {
  if (message === 'count') process.send?.({ count: receiver.count() });
});
process.on('SIGTERM', () => {
  void receiver.close().then(() => process.exit(0));
});
process.stdout.write(`READY ${receiver.url}\n`);
