// Numeric flags of the bench cases: `--name value`, with a default when the flag is absent.

/** A positive number (`--name 2.5`). */
export function positiveFlag(args: string[], name: string, fallback: number): number {
  const value = flagValue(args, name, fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} expects a positive number`);
  return value;
}

/** A positive whole number (`--name 1000`). */
export function wholeFlag(args: string[], name: string, fallback: number): number {
  const value = flagValue(args, name, fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} expects a positive whole number`);
  return value;
}

/** A whole number, zero allowed (`--name 0`). */
export function countFlag(args: string[], name: string, fallback: number): number {
  const value = flagValue(args, name, fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} expects a whole number`);
  return value;
}

function flagValue(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}
