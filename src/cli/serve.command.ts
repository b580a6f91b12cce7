import { Command } from 'commander';
import { closeOnSignals, startServer } from '../server.js';
import { addSettingOptions, configFrom } from './storage-options.js';

export function serveCommand(): Command {
  const command = new Command('serve')
    .description('Start the API server (embedded SQLite by default; PostgreSQL + Redis with --database-url/--redis-url)')
    .addHelpText('after', '\nEvery option can also be set by its environment variable; a flag wins over the variable.');
  addSettingOptions(command);
  command.action(async (opts: Record<string, unknown>) => {
    const server = await startServer(configFrom(opts));
    closeOnSignals(server, { graceMs: server.runtime.config.shutdownGraceMs, log: server.runtime.log });
  });
  return command;
}
