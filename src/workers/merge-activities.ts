// Assembling a task queue's activities from the feature folders' factories. Spreading objects
// (`{...a, ...b}`) would let a second activity of the same name silently replace the first: this
// throws instead, naming it.

type Activities = Record<string, (...args: never[]) => Promise<unknown>>;

type Merged<T extends readonly object[]> = T extends readonly [infer First, ...infer Rest extends readonly object[]] ? First & Merged<Rest> : unknown;

export class DuplicateActivityError extends Error {
  constructor(readonly activity: string) {
    super(`two features define an activity named "${activity}": one would replace the other on the task queue`);
    this.name = 'DuplicateActivityError';
  }
}

/** One object with every group's activities; throws DuplicateActivityError when a name comes twice. */
export function mergeActivities<T extends readonly object[]>(...groups: T): Merged<T> {
  const merged: Activities = {};
  for (const group of groups) {
    for (const [name, activity] of Object.entries(group as Activities)) {
      if (name in merged) throw new DuplicateActivityError(name);
      merged[name] = activity;
    }
  }
  return merged as Merged<T>;
}
