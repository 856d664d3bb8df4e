// A reply's text as the user reads it, for comparing what we drafted with what the user kept or
// typed. Pure functions: safe in activities and in workflow code.
import { htmlToText, looksLikeHtml } from './headers.js';

/** A draft body as plain text: Gmail's editor may hand us HTML. */
export function toPlainText(body: string): string {
  const text = looksLikeHtml(body) ? htmlToText(body) : body;
  return text.replace(/\r\n?/g, '\n').replace(/\u200b|\u200c|\u200d|\ufeff/g, '');
}

/** Lines with whitespace (including non-breaking spaces) collapsed, so re-spacing is not an edit. */
export function toLines(text: string): string[] {
  return text.split('\n').map((line) => line.replace(/[\s\u00a0]+/g, ' ').trim());
}

/** Quoted mail and Gmail's attribution lines are never instructions. */
export function isQuotation(line: string): boolean {
  return line.startsWith('>') || /^On .{4,200} wrote:$/.test(line);
}

/** A reply's own lines as the user reads them: plain text, whitespace collapsed, no blank or quoted lines. */
export function replyLines(body: string): string[] {
  return toLines(toPlainText(body)).filter((line) => line !== '' && !isQuotation(line));
}
