// A task queue's activities are assembled from the feature folders' factories; two features naming
// an activity alike must fail loudly, not let one silently replace the other.
import { describe, expect, it } from 'vitest';
import { DuplicateActivityError, mergeActivities } from '../../src/workers/merge-activities.js';

describe('mergeActivities', () => {
  it("keeps every group's activities", async () => {
    const merged = mergeActivities({ readThread: async () => 'thread' }, { writeDraft: async (n: number) => n * 2 });
    expect(Object.keys(merged).sort()).toEqual(['readThread', 'writeDraft']);
    expect(await merged.writeDraft(21)).toBe(42);
  });

  it('throws on a name two groups define, naming it', () => {
    expect(() => mergeActivities({ readThread: async () => 1 }, { readThread: async () => 2 })).toThrow(DuplicateActivityError);
    expect(() => mergeActivities({ a: async () => 1 }, { b: async () => 2 }, { a: async () => 3 })).toThrow('two features define an activity named "a"');
  });
});
