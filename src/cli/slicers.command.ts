import { Command, InvalidArgumentError } from 'commander';
import { ingestProtocols, outputProfiles, type IngestProtocol, type ManagedSlicerView, type OutputProfile } from '../modules/managed-slicers/managed-slicers.schema.js';
import { clientOf, withApiOptions, type ApiOptions } from './api-options.js';
import { printObject, printRows } from './output.js';

const oneOf = <T extends string>(values: readonly T[]) => (value: string): T => {
  if (!(values as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${values.join(', ')}`);
  return value as T;
};

const pageSize = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('a whole number from 1 to 100');
  return n;
};

const wholeSeconds = (value: string): number => {
  if (!/^[0-9]{1,5}$/.test(value)) throw new InvalidArgumentError('whole seconds (0-43200)');
  return Number(value);
};

/** A slicer as a row: the ingest URL carries the stream key, so only `show` prints it. */
const row = (s: ManagedSlicerView) => ({
  id: s.id,
  name: s.name,
  state: s.state,
  protocol: s.ingest_protocol,
  region: s.region,
  profile: s.output_profile,
  record: s.record,
  task: `${s.task.operation} ${s.task.state}`,
});

const taskLine = (s: ManagedSlicerView): string => `slicer ${s.id} (${s.name}): ${s.state} (task ${s.task.id}, ${s.task.operation} ${s.task.state})\n`;

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

  withApiOptions(
    slicers
      .command('list')
      .description('List the slicers, newest first (without their ingest URLs, which carry the stream keys: see show)')
      .option('--limit <n>', 'page size, 1-100 (default 50)', pageSize)
      .option('--cursor <cursor>', 'the page after the one that printed this cursor'),
  ).action(async (opts: ApiOptions & { limit?: number; cursor?: string }) => {
    const { page, nextCursor } = await clientOf(opts).managedSlicers.list({ ...(opts.limit ? { limit: opts.limit } : {}), ...(opts.cursor ? { cursor: opts.cursor } : {}) });
    if (opts.json) process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    else printRows(page.items.map(row), false, ['id', 'name', 'state', 'protocol', 'region', 'profile', 'record', 'task']);
    if (!opts.json && nextCursor) process.stderr.write(`${page.items.length} of ${page.total_items}; next page: --cursor ${nextCursor}\n`);
  });

  withApiOptions(
    slicers
      .command('create')
      .description('Create a slicer (a CREATE task provisions it); its ingest URL is printed when known (else: playline slicers show <id>)')
      .requiredOption('--name <name>', 'display name, 1-100 characters')
      .requiredOption('--region <region>', "one of the server's regions (PLAYLINE_REGIONS)")
      .requiredOption('--protocol <protocol>', `how the encoder sends: ${ingestProtocols.join(', ')}`, oneOf(ingestProtocols))
      .requiredOption('--output-profile <profile>', `output ladder: ${outputProfiles.join(', ')}`, oneOf(outputProfiles))
      .option('--description <text>', 'free text, at most 500 characters')
      .option('--dvr-window-s <seconds>', "seconds players can seek back (default: the server's PLAYLINE_LIVE_DVR_WINDOW_S)", wholeSeconds)
      .option('--no-record', 'do not record live events into the asset library (recorded by default)')
      .addHelpText('after', `
The ingest URL (printed alone on stdout) carries the stream key: treat it as a secret.
Example: playline slicers create --name "Main stage" --region eu-central-1 --protocol srt --output-profile hd-720p`),
  ).action(async (opts: ApiOptions & { name: string; region: string; protocol: IngestProtocol; outputProfile: OutputProfile; description?: string; dvrWindowS?: number; record: boolean }) => {
    const slicer = await clientOf(opts).managedSlicers.create({
      name: opts.name,
      region: opts.region,
      ingest_protocol: opts.protocol,
      output_profile: opts.outputProfile,
      record: opts.record,
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(opts.dvrWindowS !== undefined ? { dvr_window_s: opts.dvrWindowS } : {}),
    });
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(slicer, null, 2)}\n`);
      return;
    }
    process.stderr.write(taskLine(slicer));
    if (slicer.ingest_url !== null) process.stdout.write(`${slicer.ingest_url}\n`);
    else process.stderr.write(`its ingest URL is given once the CREATE task completed: playline slicers show ${slicer.id}\n`);
  });

  withApiOptions(slicers.command('show').description('One slicer, with its ingest URL (it carries the stream key)').argument('<id>', 'slicer id')).action(
    async (id: string, opts: ApiOptions) => {
      const slicer = await clientOf(opts).managedSlicers.get(id);
      if (opts.json) process.stdout.write(`${JSON.stringify(slicer, null, 2)}\n`);
      else printObject({ ...row(slicer), description: slicer.description ?? null, dvr_window_s: slicer.dvr_window_s ?? null, ingest_url: slicer.ingest_url, task: `${slicer.task.operation} ${slicer.task.state} (${slicer.task.id})` }, false);
    },
  );

  withApiOptions(
    slicers.command('delete').description('Delete a slicer (a DELETE task stops it; an event in progress ends and is recorded)').argument('<id>', 'slicer id'),
  ).action(async (id: string, opts: ApiOptions) => {
    const slicer = await clientOf(opts).managedSlicers.delete(id);
    if (opts.json) process.stdout.write(`${JSON.stringify(slicer, null, 2)}\n`);
    else process.stdout.write(taskLine(slicer));
  });

  return slicers;
}
