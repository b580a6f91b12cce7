/**
 * A keep-alive callback receiver in its own process for the callbacks benchmark: answers every
 * POST 200, counts them, announces `READY <url>`, and answers the command `count` with the count.
 */
import { announce, serveCommands } from './lib/bench-ipc.js';
import { startLocalReceiver } from '../src/platform/outbound/testing/local-receiver.js';

const receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { keep: 0 });
serveCommands({ count: () => receiver.count() });
process.on('SIGTERM', () => {
  void receiver.close().then(() => process.exit(0));
});
announce(`READY ${receiver.url}`);
