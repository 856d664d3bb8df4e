import { describe, expect, it } from 'vitest';
import { draftEditedByUser, extractReworkInstructions } from '../../src/thread/rework.js';

const generated = [
  'Hi Alice,',
  '',
  'Thanks for sending over the Q3 report. I have read through the numbers and the revenue section looks right to me,',
  'but I would like to double-check the marketing spend before we share it with the board.',
  '',
  'Could we go through it on Thursday afternoon?',
  '',
  'Best,',
  'Bob',
].join('\n');

describe('extractReworkInstructions', () => {
  it('an unedited draft holds no instructions', () => {
    expect(extractReworkInstructions(generated, generated)).toEqual({ instructions: null });
  });

  it('reads lines typed at the top of the draft', () => {
    const draft = `Make it shorter and more formal.\nDon't mention the board.\n\n${generated}`;
    expect(extractReworkInstructions(draft, generated)).toEqual({
      instructions: "Make it shorter and more formal.\nDon't mention the board.",
    });
  });

  it('tolerates CRLF, trailing spaces and non-breaking spaces', () => {
    const draft = `  Propose Friday instead\u00a0 \r\n\r\n${generated.replace(/\n/g, ' \r\n')}`;
    expect(extractReworkInstructions(draft, generated).instructions).toBe('Propose Friday instead');
  });

  it("reads Gmail's HTML editor output", () => {
    const html =
      '<div dir="ltr"><div>Say yes, but only after 3pm &amp; keep it warm</div><div><br></div>' +
      generated
        .split('\n')
        .map((line) => (line ? `<div>${line.replace(/'/g, '&#39;')}</div>` : '<div><br></div>'))
        .join('') +
      '</div>';
    expect(extractReworkInstructions(html, generated).instructions).toBe('Say yes, but only after 3pm & keep it warm');
  });

  it('copes with Gmail re-wrapping our long lines and with edits inside the reply', () => {
    const rewrapped = generated
      .replace(
        'I have read through the numbers and the revenue section looks right to me,',
        'I have read through the numbers\nand the revenue section looks right to me,',
      )
      .replace('Hi Alice,', 'Hello Alice,');
    const draft = `Ask for the spreadsheet too\n${rewrapped}`;
    expect(extractReworkInstructions(draft, generated).instructions).toBe('Ask for the spreadsheet too');
  });

  it('reads [[bracketed]] instructions anywhere, also across lines', () => {
    const draft = generated
      .replace(
        'Could we go through it on Thursday afternoon?',
        'Could we go through it on Thursday afternoon? [[offer a call\ninstead of a meeting]]',
      )
      .concat('\n[[sign with my full name]]');
    expect(extractReworkInstructions(draft, generated).instructions).toBe(
      'offer a call instead of a meeting\nsign with my full name',
    );
  });

  it('combines top lines and brackets', () => {
    const draft = `Be brief.\n${generated}\n[[add a PS about lunch]]`;
    expect(extractReworkInstructions(draft, generated).instructions).toBe('Be brief.\nadd a PS about lunch');
  });

  it('ignores quoted text and attribution lines above the reply', () => {
    const draft = `On Mon, 3 Mar 2025 at 10:00, Alice <alice@corp.test> wrote:\n> Here is the report\nMention the appendix\n\n${generated}`;
    expect(extractReworkInstructions(draft, generated).instructions).toBe('Mention the appendix');
  });

  it('ignores the quoted thread below the reply', () => {
    const draft = `${generated}\n\nOn Mon, 3 Mar 2025 at 10:00, Alice wrote:\n> Please review the attached report.`;
    expect(extractReworkInstructions(draft, generated)).toEqual({ instructions: null });
  });

  it('a draft rewritten from scratch has no recognisable instructions', () => {
    expect(extractReworkInstructions('Totally new text written by the user.', generated)).toEqual({
      instructions: null,
    });
  });

  it('an emptied draft or empty brackets give no instructions', () => {
    expect(extractReworkInstructions('', generated)).toEqual({ instructions: null });
    expect(extractReworkInstructions(`[[  ]]\n${generated}`, generated)).toEqual({ instructions: null });
  });
});

describe('draftEditedByUser', () => {
  const generated = 'Hi Alice,\n\nThanks for asking. I will send the quarterly numbers by Friday, together with the notes from the board meeting.\n\nBest,\nJane';

  it('is false for our draft as Gmail hands it back: re-wrapped, re-spaced, or as HTML', () => {
    expect(draftEditedByUser(generated, generated)).toBe(false);
    const rewrapped = generated.replace('by Friday, together', 'by Friday,\ntogether').replace(/\n/g, '\r\n');
    expect(draftEditedByUser(rewrapped, generated)).toBe(false);
    expect(draftEditedByUser(generated.replace('Thanks for asking.', 'Thanks  for\u00a0asking.'), generated)).toBe(false);
    const html = `<div dir="ltr">${generated.split('\n').map((l) => (l ? `<div>${l}</div>` : '<div><br></div>')).join('')}</div>`;
    expect(draftEditedByUser(html, generated)).toBe(false);
  });

  it('is true once the user changed, added or removed text', () => {
    expect(draftEditedByUser(generated.replace('by Friday', 'by Monday'), generated)).toBe(true);
    expect(draftEditedByUser(`${generated}\nPS: call me`, generated)).toBe(true);
    expect(draftEditedByUser(generated.replace('Best,\nJane', ''), generated)).toBe(true);
  });
});
