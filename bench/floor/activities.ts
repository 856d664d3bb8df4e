// The floor's activities: no I/O, a 1 kB result; `floorJournal` counts the finished wake-ups.

export interface FloorActivities {
  floorStep(payload: string): Promise<string>;
  floorJournal(what: 'woken' | 'done'): Promise<void>;
}

export function createFloorActivities(onDone: () => void): FloorActivities {
  return {
    async floorStep(payload) {
      return payload.length >= 1024 ? payload.slice(0, 1024) : payload.padEnd(1024, '.');
    },
    async floorJournal(what) {
      if (what === 'done') onDone();
    },
  };
}
