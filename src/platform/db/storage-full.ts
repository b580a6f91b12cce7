/** The engines' own "no space left" errors: SQLite, PostgreSQL (class 53, disk_full) and the OS. */
const FULL_CODES = new Set(['SQLITE_FULL', '53100', 'ENOSPC', 'EDQUOT']);

const codeOf = (err: unknown): string | undefined => {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
};

/** The error in a cause chain that says "no space left", wherever a service wrapped it. */
const fullErrorIn = (err: unknown): { code: string; message: string } | undefined => {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const code = codeOf(current);
    if (code !== undefined && FULL_CODES.has(code)) return { code, message: (current as { message?: unknown }).message as string };
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
};

/** True when a write failed for lack of space (the engine's error, or one that carries it as a cause). */
export const isStorageFull = (err: unknown): boolean => fullErrorIn(err) !== undefined;

/** For logs and readiness: which engine said so, and how. */
export function describeStorageFull(err: unknown): string {
  const full = fullErrorIn(err);
  return full ? `${full.code}: ${String(full.message)}` : String(err);
}
