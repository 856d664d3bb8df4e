// Checks of JSON-shaped input without a schema library, for boundaries that workflow code shares:
// the workflow sandbox evaluates a bundle's modules again for every run, and a schema library with
// schemas built at module scope costs each run milliseconds and most of its memory
// (docs/performance.md). Each check returns what it accepts; a failure throws a CheckFailure with
// the path to the bad value, which `checked` turns into the `path: reason` line callers print.

export type CheckPath = readonly (string | number)[];

export class CheckFailure extends Error {
  constructor(
    readonly path: CheckPath,
    reason: string,
  ) {
    super(reason);
  }
}

const fail = (path: CheckPath, reason: string): never => {
  throw new CheckFailure(path, reason);
};

/** A plain object (not null, not an array). */
export function checkObject(value: unknown, path: CheckPath): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'expected an object');
  return value as Record<string, unknown>;
}

export function checkLiteral<T extends string>(value: unknown, expected: T, path: CheckPath): T {
  if (value !== expected) fail(path, `expected "${expected}"`);
  return expected;
}

export function checkOneOf<T extends string>(value: unknown, allowed: readonly T[], path: CheckPath): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) fail(path, `expected one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
  return value as T;
}

/** A string of `min` to `max` characters (after trimming, with `trim`, which it returns trimmed). */
export function checkString(value: unknown, path: CheckPath, limits: { min?: number; max: number; trim?: boolean }): string {
  if (typeof value !== 'string') return fail(path, 'expected a string');
  const text = limits.trim ? value.trim() : value;
  if (text.length < (limits.min ?? 0)) fail(path, limits.min === 1 ? 'must not be empty' : `too short: at least ${limits.min} characters`);
  if (text.length > limits.max) fail(path, `too long: at most ${limits.max} characters`);
  return text;
}

/** A safe integer from `min` to `max`. */
export function checkInteger(value: unknown, path: CheckPath, limits: { min: number; max?: number }): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) return fail(path, 'expected a whole number');
  if (value < limits.min) fail(path, `too small: at least ${limits.min}`);
  if (limits.max !== undefined && value > limits.max) fail(path, `too big: at most ${limits.max}`);
  return value;
}

export function checkBoolean(value: unknown, path: CheckPath): boolean {
  if (typeof value !== 'boolean') fail(path, 'expected true or false');
  return value as boolean;
}

/** An array of `min` to `max` items, each checked by `item`. */
export function checkArray<T>(value: unknown, path: CheckPath, limits: { min?: number; max: number }, item: (value: unknown, path: CheckPath) => T): T[] {
  if (!Array.isArray(value)) return fail(path, 'expected an array');
  if (value.length < (limits.min ?? 0)) fail(path, `too few: at least ${limits.min}`);
  if (value.length > limits.max) fail(path, `too many: at most ${limits.max}`);
  return value.map((v, i) => item(v, [...path, i]));
}

/** A field that may be absent: absent stays absent in the result (spread it). */
export function optionalField<K extends string, T>(object: Record<string, unknown>, key: K, path: CheckPath, check: (value: unknown, path: CheckPath) => T): { [P in K]?: T } {
  if (!(key in object) || object[key] === undefined) return {};
  return { [key]: check(object[key], [...path, key]) } as { [P in K]?: T };
}

/** What `check` returns, or the first problem as `path: reason` ('input' for the value itself). */
export function checked<T>(check: () => T): { value: T } | { error: string } {
  try {
    return { value: check() };
  } catch (err) {
    if (!(err instanceof CheckFailure)) throw err;
    return { error: `${err.path.join('.') || 'input'}: ${err.message}` };
  }
}
