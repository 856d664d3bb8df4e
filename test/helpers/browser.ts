// A real browser for page tests: the Chromium test/setup/browser.ts found for this run (the one
// @sparticuz/chromium brings, by default), driven by playwright-core.
import { chromium, type Browser } from 'playwright-core';
import { inject } from 'vitest';
import { CHROMIUM_ARGS } from '../setup/browser.js';

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: inject('chromiumPath'), args: CHROMIUM_ARGS });
}
