#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../platform/config.js';
import { isAppError } from '../platform/errors.js';
import { serveCommand } from './serve.command.js';
import { keysCommand, workspacesCommand } from './workspaces.command.js';
import { signCommand } from './sign.command.js';
import { signPlaybackCommand } from './sign-playback.command.js';
import { simulateCommand } from './simulate.command.js';
import { clusterCommand } from './cluster.command.js';
import { assetsCommand } from './assets.command.js';
import { ingestGrantsCommand } from './ingest-grants.command.js';

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
  PLAYLINE_API_KEY=<key> playline sign --owner <id> /api/v4/workspace
                                                    print a signed curl command
  PLAYLINE_API_KEY=<key> playline assets upload movie.mp4 --owner <id> --wait
                                                    upload media to a running server, packaged to HLS`);
  program.addCommand(serveCommand());
  program.addCommand(workspacesCommand());
  program.addCommand(keysCommand());
  program.addCommand(ingestGrantsCommand());
  program.addCommand(signCommand());
  program.addCommand(signPlaybackCommand());
  program.addCommand(simulateCommand());
  program.addCommand(clusterCommand());
  program.addCommand(assetsCommand());
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  const program = buildCli();
  program.exitOverride();
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
    else process.stderr.write(`playline: ${(err as Error).message}\n`);
    return 1;
  }
}

const invokedDirectly = process.argv[1] !== undefined && /cli[/\\]main\.[jt]s$/.test(process.argv[1]);
if (invokedDirectly) {
  runCli(process.argv).then(
    (code) => {
      if (code !== 0) process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`playline: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
