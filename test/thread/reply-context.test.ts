// What a draft is written with: the user's signature (users.settings.sendAs) read from Gmail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness();
  // Set in Gmail's settings before the first draft: the worker reads it once and keeps it a while.
  await h.gmail.control.setSignature(h.email, '<div>Jane Doe<br>Head of Finance, <b>Example Ltd</b></div>');
  await h.startWorkers();
});

afterAll(async () => {
  await h?.close();
});

describe('reply context', () => {
  it('ends the draft with the signature of the primary address, as text', async () => {
    const { threadId } = await deliverAndIngest(h, {
      from: 'Alice Example <alice@partner.example>',
      subject: 'Statement question',
      text: 'Hi,\n\nCould you confirm the amount on the last statement?\n\nThanks, Alice',
    });
    const status = await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    const { gmail } = await h.accountGmail();
    const body = (await gmail.getDraft(status.draftId!))?.body ?? '';
    expect(body.trim()).toMatch(/Jane Doe\s+Head of Finance, Example Ltd$/);
    expect(body).not.toMatch(/<div>|<b>/);
    // The drafting prompt carried it (the last request of this one-email harness is the draft).
    expect(JSON.stringify(h.anthropic.lastRequest()?.body)).toContain('<signature>\\nJane Doe');
  });
});
