// Deterministic mailbox generator: given a seed, a count and a time span it yields the same
// realistic mix every time: personal mail that needs a reply (some of it in multi-message
// threads with the owner's replies), newsletters with List-Unsubscribe, automated notifications
// from no-reply senders, attachments, and non-ASCII names and subjects (RFC 2047 encoded).
// Messages come out oldest first, so the store appends without re-sorting.
import { buildMessage, type Address, type Attachment } from './mime.js';
import { Random } from './random.js';

export interface SeedOptions {
  seed: number;
  count: number;
  /** Messages are spread over this many days before endDate. */
  spanDays: number;
  endDate: number;
  owner: { email: string; name: string };
}

export interface SeededMessage {
  raw: Buffer;
  internalDate: number;
  /** System label ids, or "user:<name>" for user labels to create. */
  labelIds: string[];
}

const PEOPLE: Address[] = [
  { name: 'Alice Martin', email: 'alice.martin@example.com' },
  { name: 'Bob Okafor', email: 'bob@okafor.example.org' },
  { name: 'José Álvarez', email: 'jose.alvarez@example.es' },
  { name: 'Zoë Müller', email: 'zoe.mueller@example.de' },
  { name: '李雷', email: 'li.lei@example.cn' },
  { name: 'Søren Kierkegaard', email: 'soren@example.dk' },
  { name: 'Ægir Þórsson', email: 'aegir@example.is' },
  { name: 'Priya Raman', email: 'priya.raman@example.in' },
  { name: 'Chloé Dubois', email: 'chloe.dubois@example.fr' },
  { name: 'Dmitri Ivanov', email: 'dmitri@example.ru' },
  { name: 'Grace Hopper', email: 'grace@navy.example.mil' },
  { name: 'Ngozi Adeyemi', email: 'ngozi@example.ng' },
];

const PERSONAL_SUBJECTS = [
  'Lunch on Thursday?',
  'Quick question about the contract',
  'Café meeting tomorrow?',
  'Überprüfung des Vertrags',
  '見積もりについて',
  'Can you review the draft proposal?',
  'Invoice #{n} — can you confirm?',
  'Re-scheduling our call',
  'Photos from the weekend 📷',
  'Intro: {name} ↔ you',
  'Need your sign-off by Friday',
  'Question sur la facture',
];

const PERSONAL_BODIES = [
  'Hi {owner},\n\nWould Thursday at 12:30 work for you? Let me know.\n\nBest,\n{name}',
  'Hello {owner},\n\nCould you take a look at the attached document and tell me what you think before Friday?\n\nThanks!\n{name}',
  'Hi,\n\nJust checking in on the invoice #{n}. Did it go through on your side?\n\nCheers,\n{name}',
  'Bonjour {owner},\n\nPouvez-vous me confirmer la date de livraison ? Merci d\'avance.\n\n{name}',
  'Hallo {owner},\n\nkönnten wir den Termin auf nächste Woche verschieben? Grüße,\n{name}',
  '{owner}さん\n\nお見積もりの件、ご確認いただけますでしょうか。\n\n{name}',
];

const REPLIES = [
  'Sounds good, thanks!',
  'Yes, that works for me.',
  'Let me check and get back to you tomorrow.',
  'Done — see the updated version.',
  'Could we push it to next week instead?',
];

const NEWSLETTERS = [
  { from: { name: 'The Weekly Digest', email: 'newsletter@digest.example.com' }, subject: 'This week: {n} stories you missed' },
  { from: { name: 'Acme Deals', email: 'deals@shop.example.net' }, subject: '48h only: {n}% off everything' },
  { from: { name: 'Dev Journal', email: 'hello@devjournal.example.org' }, subject: 'Issue #{n}: Durable execution in practice' },
  { from: { name: 'Müller & Söhne GmbH', email: 'news@mueller-soehne.example.de' }, subject: 'Neuigkeiten im {month}' },
];

const NOTIFICATIONS = [
  { from: { name: 'Shop Orders', email: 'no-reply@orders.example.net' }, subject: 'Your order #{n} has shipped' },
  { from: { name: 'CI', email: 'notifications@ci.example.com' }, subject: 'Build failed: main #{n}' },
  { from: { name: 'Bank Alerts', email: 'noreply@bank.example.com' }, subject: 'Security alert: new sign-in' },
  { from: { name: 'Calendar', email: 'calendar-notification@example.com' }, subject: 'Reminder: Standup @ 09:30' },
];

const MONTHS = ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'];

interface Plan {
  date: number;
  build: () => SeededMessage;
}

function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_m, key: string) => String(values[key] ?? ''));
}

function fakeAttachment(random: Random, index: number): Attachment {
  const kind = random.pick(['pdf', 'csv', 'png'] as const);
  const size = random.int(600, 6000);
  const content =
    kind === 'csv'
      ? Buffer.from(Array.from({ length: Math.ceil(size / 24) }, (_, i) => `${i},item-${i},${(i * 7) % 100}.50`).join('\n'))
      : Buffer.from(Array.from({ length: size }, () => random.int(0, 255)));
  const contentType = { pdf: 'application/pdf', csv: 'text/csv', png: 'image/png' }[kind];
  const name = kind === 'pdf' ? `Angebot-${index}.pdf` : kind === 'csv' ? `report-${index}.csv` : `photo-${index}.png`;
  return { filename: name, contentType, content };
}

/** Yields `count` messages, oldest first. */
export function* generateMailbox(opts: SeedOptions): Generator<SeededMessage> {
  const random = new Random(opts.seed);
  const start = opts.endDate - opts.spanDays * 86_400_000;
  const owner: Address = { name: opts.owner.name, email: opts.owner.email };
  const plans: Plan[] = [];
  let n = 0;
  const recentCutoff = opts.endDate - 3 * 86_400_000;
  const inboxLabels = (date: number, category: string, extra: string[] = []): string[] => {
    const labels = [category, ...extra];
    // Recent mail is mostly in the inbox and unread; older mail is mostly read and archived.
    if (date >= recentCutoff || random.chance(0.15)) labels.unshift('INBOX');
    if (date >= recentCutoff ? random.chance(0.7) : random.chance(0.05)) labels.push('UNREAD');
    return labels;
  };

  while (plans.length < opts.count) {
    n++;
    const date = start + Math.floor(random.next() * (opts.endDate - start));
    const kind = random.next();
    if (kind < 0.4) {
      // A conversation: 1 to 6 messages alternating between a person and the owner.
      const person = random.pick(PEOPLE);
      const length = random.chance(0.4) ? random.int(2, 6) : 1;
      const subject = fill(random.pick(PERSONAL_SUBJECTS), { n: random.int(1000, 9999), name: random.pick(PEOPLE).name ?? '' });
      const domain = person.email.split('@')[1] ?? 'example.com';
      const ids: string[] = [];
      let at = date;
      for (let i = 0; i < length && plans.length < opts.count; i++) {
        const fromOwner = i % 2 === 1;
        const messageId = `<seed-${opts.seed}-${n}-${i}@${fromOwner ? 'mail.gmail.com' : domain}>`;
        const references = [...ids];
        ids.push(messageId);
        const when = at;
        const attach = !fromOwner && random.chance(0.08);
        const text = fromOwner
          ? random.pick(REPLIES) + `\n\n${owner.name}`
          : fill(random.pick(PERSONAL_BODIES), { owner: (owner.name ?? '').split(' ')[0] ?? '', name: person.name ?? '', n: random.int(1000, 9999) });
        const important = random.chance(0.3);
        const isLast = i === length - 1;
        plans.push({
          date: when,
          build: () => ({
            internalDate: when,
            raw: buildMessage({
              from: fromOwner ? owner : person,
              to: [fromOwner ? person : owner],
              subject: i === 0 ? subject : `Re: ${subject}`,
              date: when,
              messageId,
              ...(references.length > 0 ? { inReplyTo: references[references.length - 1], references } : {}),
              text,
              attachments: attach ? [fakeAttachment(random, n)] : [],
            }),
            labelIds: fromOwner
              ? ['SENT']
              : inboxLabels(when, 'CATEGORY_PERSONAL', [...(important ? ['IMPORTANT'] : []), ...(isLast && random.chance(0.05) ? ['STARRED'] : []), ...(random.chance(0.03) ? ['user:Clients'] : [])]),
          }),
        });
        at += random.int(10, 36 * 60) * 60_000;
        if (at > opts.endDate) break; // replies never land in the future (nor before their parent)
      }
    } else if (kind < 0.7) {
      const sender = random.pick(NEWSLETTERS);
      const when = date;
      const messageId = `<news-${opts.seed}-${n}@${sender.from.email.split('@')[1]}>`;
      const subject = fill(sender.subject, { n: random.int(2, 90), month: MONTHS[new Date(when).getUTCMonth()] ?? '' });
      plans.push({
        date: when,
        build: () => ({
          internalDate: when,
          raw: buildMessage({
            from: sender.from,
            to: [owner],
            subject,
            date: when,
            messageId,
            headers: {
              'List-Unsubscribe': `<mailto:unsubscribe@${sender.from.email.split('@')[1]}?subject=unsubscribe>, <https://${sender.from.email.split('@')[1]}/unsubscribe?u=${n}>`,
              'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
              'List-Id': `<${sender.from.email.split('@')[0]}.${sender.from.email.split('@')[1]}>`,
              Precedence: 'bulk',
            },
            text: `${subject}\n\nRead online: https://${sender.from.email.split('@')[1]}/issues/${n}\n\nYou are receiving this because you subscribed. Unsubscribe: https://${sender.from.email.split('@')[1]}/unsubscribe`,
            html: `<html><body><h1>${subject}</h1><p>Top stories this week…</p><a href="https://${sender.from.email.split('@')[1]}/unsubscribe">Unsubscribe</a></body></html>`,
          }),
          labelIds: inboxLabels(when, random.chance(0.7) ? 'CATEGORY_PROMOTIONS' : 'CATEGORY_UPDATES'),
        }),
      });
    } else {
      const sender = random.pick(NOTIFICATIONS);
      const when = date;
      const messageId = `<notify-${opts.seed}-${n}@${sender.from.email.split('@')[1]}>`;
      const subject = fill(sender.subject, { n: random.int(100, 99999) });
      plans.push({
        date: when,
        build: () => ({
          internalDate: when,
          raw: buildMessage({
            from: sender.from,
            to: [owner],
            subject,
            date: when,
            messageId,
            headers: { 'Auto-Submitted': 'auto-generated', 'X-Auto-Response-Suppress': 'All' },
            text: `${subject}\n\nThis is an automated message. Please do not reply.`,
          }),
          labelIds: inboxLabels(when, 'CATEGORY_UPDATES'),
        }),
      });
    }
  }
  plans.sort((a, b) => a.date - b.date);
  for (const plan of plans) yield plan.build();
}
