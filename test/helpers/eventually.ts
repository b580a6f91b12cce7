/**
 * Waits for what real I/O brings about (Redis pub/sub, database round trips, another process):
 * checks, then sleeps a few milliseconds, until `condition` holds. The deadline is only there to
 * stop a test that would otherwise hang, so it is generous enough for a loaded machine (2 shared
 * cores running several suites); no duration is asserted. Sleeping between checks, rather than
 * spinning on setImmediate, leaves the CPU to the servers being waited for.
 */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string, deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() >= deadline) throw new Error(`never reached within ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
