#!/usr/bin/env node
// `durable-inbox <group> ...`: the command line (src/cli/main.ts) by name, after `npm link` or as
// `npx durable-inbox`. The project runs its TypeScript through tsx, and so does this launcher.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
