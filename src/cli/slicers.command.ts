import { Command } from 'commander';
import { clientOf, withApiOptions, type ApiOptions } from './api-options.js';

/** `playline slicers ...`: managed slicers of a running server, over its API. */
export function slicersCommand(): Command {
  const slicers = new Command('slicers').description('Managed slicers of a running server');

  withApiOptions(
    slicers
      .command('rotate-key')
      .description("Replace a slicer's stream key and print its new ingest URL; the slicer restarts with the new key, disconnecting an encoder that uses the old one")
      .argument('<id>', 'slicer id')
      .addHelpText('after', `
The stream key is part of the ingest URL (SRT passphrase, RIST secret, RTMP stream name, hls push
path). Point the encoder at the printed URL; the old one stops working once the slicer's RESTART
task completed. --json prints the whole slicer instead.`),
  ).action(async (id: string, opts: ApiOptions) => {
    const slicer = await clientOf(opts).managedSlicers.rotateStreamKey(id);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(slicer, null, 2)}\n`);
      return;
    }
    // The URL is the command's output (a script takes stdout); what happens next goes to stderr.
    if (slicer.ingest_url === null) {
      process.stderr.write(`slicer ${slicer.id} has no ingest URL yet (its latest task: ${slicer.task.operation} ${slicer.task.state}); it will carry the new key\n`);
      return;
    }
    process.stdout.write(`${slicer.ingest_url}\n`);
    process.stderr.write(`slicer ${slicer.id} restarts with the new key (task ${slicer.task.id}, ${slicer.task.state}); encoders using the old key are disconnected\n`);
  });

  withApiOptions(
    slicers
      .command('update')
      .description("Change a slicer's settings (an UPDATE task applies them: the slicer starts afresh)")
      .argument('<id>', 'slicer id')
      .option('--dvr-window-s <seconds>', 'DVR window of the live output: seconds players can seek back (0: the short live window; at most the server\'s PLAYLINE_LIVE_DVR_WINDOW_S)')
      .option('--record', 'record each live event into the asset library (the default for a new slicer)')
      .option('--no-record', 'do not record live events')
      .addHelpText('after', `
Give at least one setting.
Examples: playline slicers update 3f2a... --dvr-window-s 3600   (an hour of DVR)
          playline slicers update 3f2a... --no-record`),
  ).action(async (id: string, opts: ApiOptions & { dvrWindowS?: string; record?: boolean }) => {
    if (opts.dvrWindowS !== undefined && !/^[0-9]{1,5}$/.test(opts.dvrWindowS)) throw new Error(`--dvr-window-s takes whole seconds (0-43200), not "${opts.dvrWindowS}"`);
    if (opts.dvrWindowS === undefined && opts.record === undefined) throw new Error('give a setting to change: --dvr-window-s <seconds>, --record or --no-record');
    const slicer = await clientOf(opts).managedSlicers.update(id, {
      ...(opts.dvrWindowS !== undefined ? { dvr_window_s: Number(opts.dvrWindowS) } : {}),
      ...(opts.record !== undefined ? { record: opts.record } : {}),
    });
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(slicer, null, 2)}\n`);
      return;
    }
    process.stdout.write(`slicer ${slicer.id}: dvr_window_s ${slicer.dvr_window_s ?? 'default'}, record ${slicer.record} (task ${slicer.task.id}, ${slicer.task.operation} ${slicer.task.state})\n`);
  });

  return slicers;
}
