// The little the database modules need from a logger; src/shared/log.ts's Logger satisfies it.
export interface DbLogger {
  info(message: string): void;
  warn(message: string): void;
}

export const silentDbLogger: DbLogger = { info: () => {}, warn: () => {} };
