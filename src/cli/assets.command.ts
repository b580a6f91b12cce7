import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { assetStates, type AssetState, type AssetView } from '../modules/assets/assets.schema.js';
import { printObject, printRows } from './output.js';
import { clientOf, withApiOptions, type ApiOptions } from './api-options.js';

const MiB = 1024 * 1024;
const size = (bytes: number) => (bytes >= MiB ? `${(bytes / MiB).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`);
const bar = (percent: number) => {
  const filled = Math.round(percent / 5);
  return `[${'#'.repeat(filled)}${'-'.repeat(20 - filled)}] ${String(Math.floor(percent)).padStart(3)}%`;
};

/**
 * A progress line on stderr: redrawn in place on a terminal; on a pipe or file, a line each
 * time it moves by 10 % (so logs stay short).
 */
function progressLine() {
  const tty = process.stderr.isTTY === true;
  let lastLogged = -10;
  let drawn = false;
  return {
    show(percent: number, text: string) {
      if (tty) {
        process.stderr.write(`\r${text}\u001b[K`);
        drawn = true;
      } else if (percent >= lastLogged + 10 || percent === 100) {
        lastLogged = percent;
        process.stderr.write(`${text}\n`);
      }
    },
    end() {
      if (drawn) process.stderr.write('\n');
      drawn = false;
      lastLogged = -10;
    },
  };
}

const summary = (a: AssetView) => ({
  id: a.id,
  title: a.title,
  state: a.state,
  progress: a.progress,
  duration_s: a.duration_s,
  renditions: a.renditions.map((r) => r.name).join(',') || null,
  size_bytes: a.size_bytes,
  poster: a.poster,
  failure_reason: a.failure_reason,
});

type WaitState = 'ready' | 'playable';

/** `--wait` alone waits for `ready`; `--wait playable` for the first playable segments. */
const waitOption = (value: string): WaitState => {
  if (value !== 'ready' && value !== 'playable') throw new InvalidArgumentError('ready or playable');
  return value;
};

const stateOption = (value: string): AssetState => {
  if (!(assetStates as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${assetStates.join(', ')}`);
  return value as AssetState;
};

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('a whole number from 1 to 100');
  return n;
};

/** The file to upload, or an error naming it (not a raw ENOENT). */
async function uploadable(file: string): Promise<void> {
  try {
    const found = await stat(file);
    if (!found.isFile()) throw new Error(`${file} is not a file: give the media file to upload`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`no such file: ${file} (looked for ${resolve(file)})`, { cause: err });
    if (code === 'EACCES') throw new Error(`cannot read ${file}: permission denied`, { cause: err });
    throw err;
  }
}

/** Exit code of a program stopped by Ctrl-C (128 + SIGINT), as a shell reports it. */
export const INTERRUPTED_EXIT_CODE = 130;

/** `playline assets ...`: the asset library of a running server, over its API. */
export function assetsCommand(): Command {
  const assets = new Command('assets').description('The asset library of a running server: upload media (packaged to HLS), list, show, retry a failed one, delete');

  withApiOptions(
    assets
      .command('upload')
      .description('Upload a media file; it is packaged to HLS in the background (--wait follows it to ready, --wait playable until it can be played)')
      .argument('<file>', 'the media file (MP4, MOV, MKV, WebM, MPEG-TS...)')
      .option('--title <title>', 'the asset title (default: the file name)')
      .option('--wait [state]', 'wait until `ready` (the default) or `playable` (plays while still packaged), with a progress bar; exit code 1 if packaging failed', waitOption),
  ).action(async (file: string, opts: ApiOptions & { title?: string; wait?: true | WaitState }) => {
    const client = clientOf(opts);
    await uploadable(file);
    const line = progressLine();
    const name = basename(file);
    // Ctrl-C stops the upload at once (the server drops the partial file) and exits 130.
    const abort = new AbortController();
    const onInterrupt = () => abort.abort();
    process.once('SIGINT', onInterrupt);
    let asset: AssetView;
    try {
      asset = await client.assets.upload(file, {
        ...(opts.title !== undefined ? { title: opts.title } : {}),
        signal: abort.signal,
        onProgress: (sent, total) => {
          const percent = total ? (sent / total) * 100 : 0;
          line.show(percent, `uploading ${name} ${bar(percent)} ${size(sent)}${total ? ` / ${size(total)}` : ''}`);
        },
      });
    } catch (err) {
      line.end();
      if (!abort.signal.aborted) throw err;
      process.stderr.write(`playline: upload of ${name} interrupted (Ctrl-C); the server keeps nothing of it\n`);
      process.exitCode = INTERRUPTED_EXIT_CODE;
      return;
    } finally {
      process.removeListener('SIGINT', onInterrupt);
    }
    line.end();
    if (!opts.json) process.stderr.write(`uploaded as ${asset.id}\n`);
    if (opts.wait) {
      const until = opts.wait === true ? 'ready' : opts.wait;
      asset = await client.assets.waitUntilPackaged(asset.id, {
        until,
        onProgress: (a) => line.show(a.progress, `packaging ${a.id} ${a.state === 'uploaded' ? '(waiting for a slot)' : bar(a.progress)}`),
      });
      const ended = asset.state === 'ready' ? bar(100) : asset.state === 'playable' ? `${bar(asset.progress)} playable (${asset.duration_s ?? 0} s so far)` : 'failed';
      line.show(asset.state === 'playable' ? asset.progress : 100, `packaging ${asset.id} ${ended}`);
      line.end();
    }
    if (opts.json) process.stdout.write(`${JSON.stringify(asset, null, 2)}\n`);
    else printObject(summary(asset), false);
    if (asset.state === 'failed') {
      process.stderr.write(`playline: asset ${asset.id} failed: ${asset.failure_reason ?? 'no reason given'}\n`);
      process.exitCode = 1;
    }
  });

  withApiOptions(
    assets
      .command('list')
      .description('List assets, newest first')
      .option('--state <state>', `only assets in this state (${assetStates.join(', ')})`, stateOption)
      .option('--slicer <id>', 'only the recorded live events of this managed slicer')
      .option('--limit <n>', 'page size, 1-100 (default: every asset)', positiveInt)
      .option('--cursor <cursor>', 'the page after the one that printed this cursor'),
  ).action(async (opts: ApiOptions & { state?: AssetState; slicer?: string; limit?: number; cursor?: string }) => {
    const { page, nextCursor } = await clientOf(opts).assets.list({
      ...(opts.state ? { state: opts.state } : {}),
      ...(opts.slicer ? { source_slicer_id: opts.slicer } : {}),
      ...(opts.limit ? { limit: opts.limit } : {}),
      ...(opts.cursor ? { cursor: opts.cursor } : {}),
    });
    if (opts.json) process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    else printRows(page.items.map(summary), false, ['id', 'state', 'progress', 'duration_s', 'renditions', 'title']);
    if (!opts.json && nextCursor) process.stderr.write(`${page.items.length} of ${page.total_items}; next page: --cursor ${nextCursor}\n`);
  });

  withApiOptions(assets.command('get').description('Show one asset').argument('<id>', 'asset id')).action(async (id: string, opts: ApiOptions) => {
    const asset = await clientOf(opts).assets.get(id);
    if (opts.json) process.stdout.write(`${JSON.stringify(asset, null, 2)}\n`);
    else printObject(summary(asset), false);
  });

  withApiOptions(assets.command('retry').description('Package a failed asset again from its kept upload').argument('<id>', 'asset id')).action(async (id: string, opts: ApiOptions) => {
    const asset = await clientOf(opts).assets.retry(id);
    if (opts.json) process.stdout.write(`${JSON.stringify(asset, null, 2)}\n`);
    else printObject(summary(asset), false);
  });

  withApiOptions(assets.command('delete').description('Delete an asset and its media').argument('<id>', 'asset id')).action(async (id: string, opts: ApiOptions) => {
    const deleted = await clientOf(opts).assets.delete(id);
    if (opts.json) process.stdout.write(`${JSON.stringify(deleted, null, 2)}\n`);
    else process.stdout.write(`deleted ${id}\n`);
  });

  return assets;
}
