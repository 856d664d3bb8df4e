// Secrets that have no business in an LLM prompt: payment card numbers, private keys, API tokens,
// passwords written into mail, one-time sign-in codes. They are replaced by a marker before mail
// text reaches the model (the classification and the draft need none of them). Pure text in, text out.

const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----/g;

/** Token formats with a recognisable prefix (cloud, code hosting, chat, payment and LLM providers). */
const TOKENS = [
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key id
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API key
  /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g, // GitHub
  /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, // Slack
  /\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}\b/g, // Stripe
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b/g, // Anthropic, OpenAI
];

/** "password: hunter2", "PIN = 1234": the value goes, the word stays. */
const PASSWORD = /\b(password|passwd|passcode|pwd|pin)(\s*[:=]\s*)\S+/gi;

/** "Your verification code is 482913": the digits go. */
const ONE_TIME_CODE =
  /\b((?:verification|security|login|sign-in|signin|one-time|2fa|otp|confirmation|authentication)\s+(?:code|pin|number)\b\D{0,12}?)\d{4,8}\b/gi;

/** 13 to 19 digits, spaces or dashes between groups allowed. */
const CARD_CANDIDATE = /\b\d(?:[ -]?\d){12,18}\b/g;

function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export function redactSecrets(text: string): string {
  let out = text.replace(PRIVATE_KEY, '[private key removed]');
  for (const token of TOKENS) out = out.replace(token, '[secret removed]');
  out = out.replace(PASSWORD, (_m, word: string, sep: string) => `${word}${sep}[removed]`);
  out = out.replace(ONE_TIME_CODE, (_m, lead: string) => `${lead}[code removed]`);
  out = out.replace(CARD_CANDIDATE, (candidate) => {
    const digits = candidate.replace(/\D/g, '');
    return digits.length >= 13 && passesLuhn(digits) ? '[card number removed]' : candidate;
  });
  return out;
}
