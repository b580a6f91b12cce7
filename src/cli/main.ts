#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { sendLogsToStderr } from '../platform/logger.js';
import { ConfigError } from '../platform/config.js';
import { isAppError } from '../platform/errors.js';
import { PlaylineApiError } from '../client/index.js';
import { credentialsInUse } from './api-options.js';
import { serveCommand } from './serve.command.js';
import { keysCommand, workspacesCommand } from './workspaces.command.js';
import { usageCommand } from './usage.command.js';
import { signCommand } from './sign.command.js';
import { signPlaybackCommand } from './sign-playback.command.js';
import { simulateCommand } from './simulate.command.js';
import { clusterCommand } from './cluster.command.js';
import { assetsCommand } from './assets.command.js';
import { slicersCommand } from './slicers.command.js';
import { sharesCommand } from './shares.command.js';
import { ingestGrantsCommand } from './ingest-grants.command.js';
import { apiCommand } from './api.command.js';
import { loginCommand, logoutCommand } from './login.command.js';
import { backupCommand, restoreCommand } from './backup.command.js';
import { callbackCommand, deliveriesCommand } from './deliveries.command.js';
import { webhooksCommand } from './webhooks.command.js';

/** The `playline` command line: a thin adapter over the same services as the HTTP API. */
export function buildCli(): Command {
  const program = new Command('playline')
    .description('Playline: the v4 video platform API (statistics, publishing, slicers, Error Reporting)')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', `
Examples:
  playline serve --port 8080 --data-dir ./data     start on the embedded SQLite default
  playline workspaces create --name "Acme"          create a workspace (works while the server runs)
  playline keys create --owner <workspace id>       create an API key (the secret is printed once)
  playline login --owner <workspace id>             save the workspace and its key (asked for, never shown)
  playline api GET /api/v4/workspace                send a signed request, print the answer
  playline sign /api/v4/workspace                   print a signed curl command
  playline assets upload movie.mp4 --wait           upload media to a running server, packaged to HLS
  playline usage                                    your workspace's quotas: used and limit of each
  playline slicers rotate-key <slicer id>           replace a slicer's stream key, print its new ingest URL
  playline shares add <workspace id>                let that workspace play your content (coid=<your id>)
  playline webhooks create --url <url> --events live.started,live.ended   signed events, retried`);
  program.addCommand(serveCommand());
  program.addCommand(workspacesCommand());
  program.addCommand(keysCommand());
  program.addCommand(ingestGrantsCommand());
  program.addCommand(loginCommand());
  program.addCommand(logoutCommand());
  program.addCommand(apiCommand());
  program.addCommand(signCommand());
  program.addCommand(signPlaybackCommand());
  program.addCommand(simulateCommand());
  program.addCommand(clusterCommand());
  program.addCommand(assetsCommand());
  program.addCommand(slicersCommand());
  program.addCommand(sharesCommand());
  program.addCommand(usageCommand());
  program.addCommand(deliveriesCommand());
  program.addCommand(callbackCommand());
  program.addCommand(webhooksCommand());
  program.addCommand(backupCommand());
  program.addCommand(restoreCommand());
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  const program = buildCli();
  program.exitOverride();
  // Only `serve` writes logs to stdout; every other command's stdout is its output (--json included).
  program.hook('preAction', (_program, action) => {
    if (action.name() !== 'serve') sendLogsToStderr();
  });
  for (const sub of program.commands) {
    sub.exitOverride();
    for (const leaf of sub.commands) leaf.exitOverride();
  }
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof ConfigError) process.stderr.write(`playline: ${err.message}\n`);
    else if (isAppError(err)) process.stderr.write(`playline: ${err.detail} (${err.code})\n`);
    else if (err instanceof PlaylineApiError && err.status === 401 && credentialsInUse() !== undefined) {
      // A refused signature: which credentials were used is the first thing to check.
      process.stderr.write(`playline: ${err.message}\n  signed as: ${credentialsInUse() ?? ''}\n`);
    }
    else process.stderr.write(describeFailure(err));
    return 1;
  }
}

/**
 * An error as the user needs it: its message, then each cause beneath it (a network error's
 * "fetch failed" alone says nothing: ECONNREFUSED, "other side closed" say what happened). A
 * file error names the path instead of a raw ENOENT.
 */
export function describeFailure(err: unknown): string {
  const lines: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const e = current as NodeJS.ErrnoException;
    const text = e.code === 'ENOENT' && e.path !== undefined ? `no such file or directory: ${e.path}` : e.code !== undefined && !(e.message ?? '').includes(e.code) ? `${e.message} (${e.code})` : (e.message ?? String(current));
    // A cause that only repeats the path its error already names adds nothing; nor does undici's
    // bare "fetch failed" wrapper (the cause beneath it says what happened).
    const repeats = depth > 0 && ((e.path !== undefined && (lines[0] ?? '').includes(e.path)) || (e.message === 'fetch failed' && e.cause !== undefined));
    if (!repeats) lines.push(depth === 0 ? `playline: ${text}` : `  cause: ${text}`);
    current = e instanceof Error ? e.cause : undefined;
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Runs the CLI as the process: its exit code, and a reader that closes the pipe early
 * (`playline --help | head -1`) ends the program quietly instead of crashing on EPIPE.
 */
export function runAsProgram(argv: string[]): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
  void runCli(argv).then((code) => {
    if (code !== 0) process.exitCode = code;
  });
}

/**
 * Whether this module is the program itself (`node dist/cli/main.js`, `tsx src/cli/main.ts`),
 * compared by real path: a symlink to it counts, an import (tests, bin.ts) does not.
 */
const isProgram = (script: string | undefined): boolean => {
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
};

if (isProgram(process.argv[1])) runAsProgram(process.argv);
