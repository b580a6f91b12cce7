import { Command } from 'commander';
import { addSettingOptions, configFrom } from './storage-options.js';
import { applyServerV8Settings, SERVER_NODE_FLAGS, startedWithServerFlags } from './node-flags.js';

export function serveCommand(): Command {
  const command = new Command('serve')
    .description('Start the API server (embedded SQLite by default; PostgreSQL + Redis with --database-url/--redis-url)')
    .addHelpText('after', '\nEvery option can also be set by its environment variable; a flag wins over the variable.');
  addSettingOptions(command);
  command.action(async (opts: Record<string, unknown>) => {
    applyServerV8Settings();
    // The server is loaded when it starts, so that the other commands start without it.
    const { closeOnSignals, startServer } = await import('../server.js');
    const server = await startServer(configFrom(opts));
    if (!startedWithServerFlags()) {
      server.runtime.log.warn(
        { missing: SERVER_NODE_FLAGS },
        `started without node ${SERVER_NODE_FLAGS.join(' ')} (npm start, the playline executable, the Dockerfile and the systemd unit give it): garbage-collection pauses under load are about twice as long`,
      );
    }
    closeOnSignals(server, { graceMs: server.runtime.config.shutdownGraceMs, log: server.runtime.log });
  });
  return command;
}
