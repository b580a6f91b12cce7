/**
 * The channel between a bench server (a child process) and the benchmark driving it. A bench
 * server's stdout is its log, redirected to a file as an operator would (see startBenchServer);
 * what the driver needs (its URL, credentials) and the answers to its commands go over IPC.
 */

/** A line for the driver (`READY <url>`, `CREDENTIALS <owner> <key>`); stdout when run by hand. */
export const announce = (line: string): void => {
  if (process.send) process.send({ line });
  else process.stdout.write(`${line}\n`);
};

export type CommandHandlers = Record<string, (arg: unknown) => unknown>;

/** Answers `{ id, command, arg }` messages with `{ id, result }` (or `{ id, error }`). */
export const serveCommands = (handlers: CommandHandlers): void => {
  process.on('message', (message: { id?: number; command?: string; arg?: unknown }) => {
    if (typeof message !== 'object' || message === null || message.id === undefined || message.command === undefined) return;
    const { id, command, arg } = message;
    const handler = handlers[command];
    void Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown bench command ${command}`);
        return handler(arg);
      })
      .then(
        (result) => process.send?.({ id, result }),
        (err: unknown) => process.send?.({ id, error: String(err) }),
      );
  });
};
