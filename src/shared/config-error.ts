// A setting that is missing or wrong: entrypoints print its one line and exit 1 (config/env.ts).
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
