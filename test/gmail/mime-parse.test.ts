import type { gmail_v1 } from 'googleapis';
import { describe, expect, it } from 'vitest';
import { extractBody, getHeader, htmlToText, parseGmailMessage } from '../../src/gmail/index.js';
import { bodyOnlyInRaw } from '../../src/gmail/mime.js';
import { toMessageRow } from '../../src/db/message-rows.js';
import { decodeHeaderText, decodeQuotedPrintable, encodeQuotedPrintable } from '../../src/gmail/mime-encoding.js';

type Part = gmail_v1.Schema$MessagePart;

// Payload parts shaped like users.messages.get format=full: body.data is base64url of the part's content
// with the transfer encoding already removed (Gmail does that), in the part's own charset.
function leaf(mimeType: string, content: string | Uint8Array, extra: { charset?: string; headers?: Record<string, string>; filename?: string } = {}): Part {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  const contentType = extra.charset ? `${mimeType}; charset="${extra.charset}"` : mimeType;
  return {
    mimeType,
    filename: extra.filename ?? '',
    headers: Object.entries({ 'Content-Type': contentType, ...extra.headers }).map(([name, value]) => ({ name, value })),
    body: { size: bytes.length, data: bytes.toString('base64url') },
  };
}

function attachment(filename: string, mimeType: string, size: number, attachmentId: string): Part {
  return {
    mimeType,
    filename,
    headers: [
      { name: 'Content-Type', value: `${mimeType}; name="${filename}"` },
      { name: 'Content-Disposition', value: `attachment; filename="${filename}"` },
    ],
    body: { size, attachmentId },
  };
}

function multipart(subtype: string, parts: Part[]): Part {
  return { mimeType: `multipart/${subtype}`, filename: '', headers: [{ name: 'Content-Type', value: `multipart/${subtype}; boundary="b"` }], body: { size: 0 }, parts };
}

function message(payload: Part | undefined, topHeaders: Record<string, string> = {}, labelIds: string[] = ['INBOX']): gmail_v1.Schema$Message {
  if (payload) payload.headers = [...Object.entries(topHeaders).map(([name, value]) => ({ name, value })), ...(payload.headers ?? [])];
  return { id: 'msg1', threadId: 'thr1', labelIds, internalDate: '1763700000000', historyId: '42', snippet: 'It&#39;s here', payload };
}

describe('decodeHeaderText (RFC 2047)', () => {
  it('decodes B and Q words and drops whitespace between adjacent words', () => {
    expect(decodeHeaderText('=?UTF-8?B?UsOpdW5pb24=?= =?utf-8?Q?_d=C3=A9j=C3=A0_pr=C3=AAte?=')).toBe('Réunion déjà prête');
  });

  it('keeps whitespace between an encoded word and plain text', () => {
    expect(decodeHeaderText('Hello =?ISO-8859-1?Q?J=F6rg?= and friends')).toBe('Hello Jörg and friends');
  });

  it('joins a multi-byte character split across two encoded words', () => {
    const bytes = Buffer.from('会議', 'utf8'); // 6 bytes, split mid-character
    const header = `=?UTF-8?B?${bytes.subarray(0, 4).toString('base64')}?= =?UTF-8?B?${bytes.subarray(4).toString('base64')}?=`;
    expect(decodeHeaderText(header)).toBe('会議');
  });

  it('decodes legacy charsets through TextDecoder', () => {
    expect(decodeHeaderText('=?windows-1252?Q?=93quoted=94?=')).toBe('“quoted”');
    expect(decodeHeaderText('=?ISO-2022-JP?B?GyRCJUYlOSVIGyhC?=')).toBe('テスト');
  });

  it('falls back to UTF-8 with a warning for an unknown charset', () => {
    const warnings: string[] = [];
    expect(decodeHeaderText('=?x-unknown?Q?abc?=', warnings)).toBe('abc');
    expect(warnings[0]).toContain('x-unknown');
  });

  it('leaves malformed words and plain text alone and unfolds', () => {
    expect(decodeHeaderText('=?UTF-8?X?abc?= and\r\n more')).toBe('=?UTF-8?X?abc?= and more');
  });
});

describe('quoted-printable', () => {
  it('decodes soft breaks, escapes, and lowercase hex; keeps malformed escapes literally', () => {
    const encoded = 'caf=C3=A9 au lait, long line =\r\ncontinued=\n here; price=3d5 and 100%=ZZ';
    expect(Buffer.from(decodeQuotedPrintable(encoded)).toString('utf8')).toBe('café au lait, long line continued here; price=5 and 100%=ZZ');
  });

  it('round-trips arbitrary text', () => {
    const text = 'Grüße =\tend \n' + 'ü'.repeat(60) + '\n\nlast line ';
    const encoded = encodeQuotedPrintable(text);
    expect(encoded).toMatch(/^[\t\x20-\x7e\r\n]*$/);
    expect(Buffer.from(decodeQuotedPrintable(encoded)).toString('utf8')).toBe(text.replace(/\n/g, '\r\n'));
  });
});

describe('parseGmailMessage', () => {
  const headers = {
    From: '=?UTF-8?B?Sm9zw6kgTcO8bGxlcg==?= <jose@example.com>',
    To: 'me@example.com, "Other, Person" <other@example.com>',
    Cc: 'cc@example.com',
    SUBJECT: '=?UTF-8?Q?R=C3=A9union?= demain',
    'Message-ID': '<abc@mail.example.com>',
    'In-Reply-To': '<parent@example.com>',
    References: '<root@example.com>\r\n <parent@example.com>',
    Date: 'Fri, 21 Nov 2025 10:00:00 +0100',
  };

  it('reads headers case-insensitively, decoded, with threading ids', () => {
    const parsed = parseGmailMessage(message(leaf('text/plain', 'Bonjour', { charset: 'utf-8' }), headers));
    expect(parsed).toMatchObject({
      id: 'msg1',
      threadId: 'thr1',
      internalDate: 1763700000000,
      historyId: '42',
      snippet: "It's here",
      messageId: '<abc@mail.example.com>',
      inReplyTo: '<parent@example.com>',
      references: ['<root@example.com>', '<parent@example.com>'],
      from: { name: 'José Müller', address: 'jose@example.com' },
      to: [{ address: 'me@example.com' }, { name: 'Other, Person', address: 'other@example.com' }],
      cc: [{ address: 'cc@example.com' }],
      subject: 'Réunion demain',
      date: 'Fri, 21 Nov 2025 10:00:00 +0100',
      body: 'Bonjour',
      bodySource: 'text/plain',
      isFromUser: false,
      isDraft: false,
      parseWarnings: [],
    });
    expect(getHeader(parsed.headers, 'subject')).toBe('Réunion demain');
    expect(getHeader(parsed.headers, 'MESSAGE-ID')).toBe('<abc@mail.example.com>');
  });

  it('brackets a Message-ID its sender wrote without angle brackets, so a reply can reference it', () => {
    const bare = parseGmailMessage(message(leaf('text/plain', 'x'), { ...headers, 'Message-ID': '  ken-no-brackets@garage.example ' }));
    expect(bare.messageId).toBe('<ken-no-brackets@garage.example>');
    expect(parseGmailMessage(message(leaf('text/plain', 'x'), { ...headers, 'Message-ID': '' })).messageId).toBe('');
    expect(parseGmailMessage(message(leaf('text/plain', 'x'), { From: 'a@b.example' })).messageId).toBe('');
  });

  it('keeps the exact Subject, line breaks an encoded word held included, beside the one shown', () => {
    for (const value of ['Quarterly\r\nnumbers', '=?UTF-8?Q?Quarterly=0D=0Anumbers?=']) {
      const parsed = parseGmailMessage(message(leaf('text/plain', 'x'), { Subject: value }));
      expect(parsed).toMatchObject({ subject: 'Quarterly numbers', exactSubject: 'Quarterly\r\nnumbers' });
    }
    expect(parseGmailMessage(message(leaf('text/plain', 'x'), { Subject: '=?UTF-8?Q?Caf=C3=A9?=' })).exactSubject).toBeUndefined();
  });

  it('decodes the body charset', () => {
    const latin1 = Buffer.from('Grüße aus Köln', 'latin1');
    expect(parseGmailMessage(message(leaf('text/plain', latin1, { charset: 'ISO-8859-1' }))).body).toBe('Grüße aus Köln');
  });

  it("keeps Gmail's sizeEstimate, which the backfill stores as raw_size (its own estimate only without one)", () => {
    const withSize = parseGmailMessage({ ...message(leaf('text/plain', 'Hello')), sizeEstimate: 48213 });
    expect(withSize.sizeEstimate).toBe(48213);
    expect(toMessageRow(withSize).raw_size).toBe(48213);
    const without = parseGmailMessage(message(leaf('text/plain', 'Hello'), { Subject: 'Hi' }));
    expect(without.sizeEstimate).toBeUndefined();
    expect(toMessageRow(without).raw_size).toBeGreaterThan('Subject'.length + 'Hi'.length + 'Hello'.length);
  });

  it('marks SENT and DRAFT messages as the user’s', () => {
    expect(parseGmailMessage(message(leaf('text/plain', 'x'), {}, ['SENT'])).isFromUser).toBe(true);
    const draft = parseGmailMessage(message(leaf('text/plain', 'x'), {}, ['DRAFT']));
    expect(draft.isFromUser && draft.isDraft).toBe(true);
  });

  it('prefers text/plain in multipart/alternative, whatever the order', () => {
    const payload = multipart('alternative', [leaf('text/html', '<p>HTML <b>version</b></p>'), leaf('text/plain', 'Plain version\r\nline 2')]);
    const parsed = parseGmailMessage(message(payload));
    expect(parsed.body).toBe('Plain version\nline 2');
    expect(parsed.bodySource).toBe('text/plain');
  });

  it('finds the body in nested multipart/mixed and lists attachments without their content', () => {
    const payload = multipart('mixed', [
      multipart('alternative', [leaf('text/plain', 'See the attached report.'), leaf('text/html', '<p>See the attached report.</p>')]),
      attachment('report.pdf', 'application/pdf', 48213, 'ANGjdJ_att1'),
      leaf('text/csv', 'a,b\n1,2', { filename: 'data.csv', headers: { 'Content-Disposition': 'attachment; filename="data.csv"' } }),
    ]);
    payload.parts![0]!.partId = '0';
    const parsed = parseGmailMessage(message(payload));
    expect(parsed.body).toBe('See the attached report.');
    expect(parsed.attachments).toEqual([
      { filename: 'report.pdf', mimeType: 'application/pdf', size: 48213, attachmentId: 'ANGjdJ_att1' },
      { filename: 'data.csv', mimeType: 'text/csv', size: 7 },
    ]);
    expect(parsed.parseWarnings).toEqual([]);
  });

  it('lists inline images of multipart/related as attachments and keeps the html body', () => {
    const image: Part = { mimeType: 'image/png', filename: 'logo.png', headers: [{ name: 'Content-ID', value: '<logo>' }], body: { size: 1200, attachmentId: 'img1' } };
    const payload = multipart('related', [leaf('text/html', '<div>Hi<br>there &amp; welcome</div><img src="cid:logo">'), image]);
    const parsed = parseGmailMessage(message(payload));
    expect(parsed.bodySource).toBe('text/html');
    expect(parsed.body).toBe('Hi\nthere & welcome');
    expect(parsed.attachments.map((a) => a.filename)).toEqual(['logo.png']);
  });

  it('falls back to a crude text rendering of text/html', () => {
    const html =
      '<html><head><style>p{color:red}</style><title>x</title></head><body><h1>Invoice</h1><p>Dear&nbsp;customer,</p>' +
      '<p>Amount: &euro;12 &lt;due&gt;</p><ul><li>one</li><li>two</li></ul><script>alert(1)</script><!-- hidden --></body></html>';
    const parsed = parseGmailMessage(message(leaf('text/html', html, { charset: 'utf-8' })));
    expect(parsed.bodySource).toBe('text/html');
    expect(parsed.body).toBe('Invoice\n\nDear customer,\n\nAmount: €12 <due>\n\n- one\n- two');
  });

  it('decodes a body that is still quoted-printable despite Gmail normally removing it', () => {
    const stillEncoded = leaf('text/plain', 'Gr=C3=BC=C3=9Fe, a soft =\r\nbreak', { charset: 'utf-8', headers: { 'Content-Transfer-Encoding': 'quoted-printable' } });
    const parsed = parseGmailMessage(message(stillEncoded));
    expect(parsed.body).toBe('Grüße, a soft break');
    expect(parsed.parseWarnings).toContain('body still quoted-printable encoded, decoded');
  });

  it('does not decode already-decoded text again', () => {
    const text = 'Grüße! The formula is x=3D in the old notation and a=b.';
    const decoded = leaf('text/plain', text, { charset: 'utf-8', headers: { 'Content-Transfer-Encoding': 'quoted-printable' } });
    expect(parseGmailMessage(message(decoded)).body).toBe(text);
    const shortWord = leaf('text/plain', 'Test', { headers: { 'Content-Transfer-Encoding': 'base64' } });
    expect(parseGmailMessage(message(shortWord)).body).toBe('Test');
  });

  it('decodes a body that is still base64', () => {
    const inner = Buffer.from('Hola, ¿qué tal? '.repeat(8), 'utf8').toString('base64').replace(/.{76}/g, '$&\r\n');
    const parsed = parseGmailMessage(message(leaf('text/plain', inner, { charset: 'utf-8', headers: { 'Content-Transfer-Encoding': 'base64' } })));
    expect(parsed.body).toBe('Hola, ¿qué tal? '.repeat(8));
  });

  it('reads metadata-format messages without a body', () => {
    const parsed = parseGmailMessage({ id: 'm', threadId: 't', internalDate: '5', payload: { mimeType: 'text/plain', headers: [{ name: 'Subject', value: 'Hi' }] } });
    expect(parsed).toMatchObject({ subject: 'Hi', body: '', bodySource: 'none', parseWarnings: [] });
  });
});

describe('broken MIME never throws', () => {
  const invalidBase64 = leaf('text/plain', 'ignored', { charset: 'x-klingon' });
  invalidBase64.body!.data = '!!!not*base64$$$';
  const broken: Array<[string, Part]> = [
    ['multipart without children', multipart('mixed', [])],
    ['children that are null', { mimeType: 'multipart/mixed', parts: [null as unknown as Part, leaf('text/plain', 'survivor')] }],
    ['missing mime types everywhere', { parts: [{ body: { data: Buffer.from('no type').toString('base64url') } }] }],
    ['invalid base64 and unknown charset', invalidBase64],
    ['a text part whose data is an attachment id', { mimeType: 'text/plain', filename: '', body: { attachmentId: 'big', size: 9_000_000 } }],
    ['image as the only body', { mimeType: 'image/jpeg', filename: '', body: { data: 'AAAA' } }],
    ['absurdly deep nesting', Array.from({ length: 200 }).reduce<Part>((inner) => multipart('mixed', [inner]), leaf('text/plain', 'deep'))],
  ];

  it.each(broken)('%s', (_name, payload) => {
    const parsed = parseGmailMessage(message(payload, { Subject: '=?UTF-8?B?broken', From: '<<<>>>' }));
    expect(typeof parsed.body).toBe('string');
    expect(parsed.subject).toBe('=?UTF-8?B?broken');
    expect(parsed.parseWarnings.length).toBeGreaterThan(0);
  });

  it('a message without payload (format=minimal) has empty fields', () => {
    expect(parseGmailMessage({ id: 'm', threadId: 't', labelIds: ['INBOX'] })).toMatchObject({ id: 'm', subject: '', body: '', from: null, to: [], internalDate: 0 });
  });

  it('headers that are not a list', () => {
    const odd = message(leaf('text/plain', 'still readable'));
    odd.payload!.headers = 'oops' as unknown as [];
    const parsed = parseGmailMessage(odd);
    expect(parsed).toMatchObject({ body: 'still readable', subject: '', from: null });
    expect(parsed.parseWarnings).toContain('payload headers are not a list');
  });

  it('recovers the readable part of a partly broken tree', () => {
    const payload: Part = { mimeType: 'multipart/mixed', parts: [null as unknown as Part, { mimeType: 'multipart/alternative' }, leaf('text/plain', 'survivor')] };
    const parsed = parseGmailMessage(message(payload));
    expect(parsed.body).toBe('survivor');
    expect(parsed.parseWarnings.some((w) => w.includes('no children'))).toBe(true);
  });

  it('extractBody tolerates a non-object payload', () => {
    expect(extractBody('garbage' as unknown as Part)).toMatchObject({ body: '', bodySource: 'none' });
  });
});

describe('a multipart whose boundary never appears', () => {
  // As mail clients do, its body is read as text, the defect noted; CPython's msg_17 and msg_41 and two
  // SpamAssassin spams (their declared boundary is not the one used) are of this kind.
  const top = (contentType: string, data?: Buffer): Part => ({
    mimeType: contentType.split(';')[0]!,
    filename: '',
    headers: [{ name: 'Content-Type', value: contentType }],
    body: data ? { size: data.length, data: data.toString('base64url') } : { size: 0 },
    parts: [],
  });
  const raw = (contentType: string, body: string | Buffer) =>
    Buffer.concat([Buffer.from(`From: Barry <barry@example.com>\r\nSubject: Dingus\r\nContent-Type: ${contentType}\r\n\r\n`), Buffer.from(body)]);

  it('is read as text from the bytes Gmail hands over, the defect in the warnings', () => {
    const body = 'Hi there,\r\n\r\nThis is the dingus fish.\r\n';
    const parsed = parseGmailMessage(message(top('multipart/mixed; boundary="BOUNDARY"', Buffer.from(body))));
    expect(parsed).toMatchObject({ body: 'Hi there,\n\nThis is the dingus fish.\n', bodySource: 'text/plain' });
    expect(parsed.bodyDefect).toBe('multipart/mixed top-level part has no parts (its boundary "BOUNDARY" never appears): read as text');
    expect(parsed.parseWarnings).toContain(parsed.bodyDefect);
  });

  it('is read from the raw message when Gmail gives neither parts nor bytes, in its 8-bit charset', () => {
    const contentType = 'multipart/alternative; boundary="=Multipart Boundary 0925021429"';
    const payload = top(contentType);
    expect(bodyOnlyInRaw(payload)).toBe(true);
    const latin1 = Buffer.from('This is a multipart MIME message.\r\n\r\n--= Multipart Boundary 0925021429\r\nContent-Type: text/plain\r\n\r\nIncroyable, déjà là !\r\n', 'latin1');
    expect(parseGmailMessage(message(payload)).bodySource).toBe('none'); // without the raw: nothing to read
    const parsed = parseGmailMessage(message(top(contentType)), raw(contentType, latin1));
    expect(parsed.bodySource).toBe('text/plain');
    expect(parsed.body).toContain('Incroyable, déjà là !');
    expect(parsed.body).toMatch(/^This is a multipart MIME message\.\n/);
    expect(parsed.bodyDefect).toMatch(/has no parts \(its boundary "=Multipart Boundary 0925021429" never appears\): read as text$/);
  });

  it('is read as text when it names no boundary at all', () => {
    for (const contentType of ['multipart/alternative;', 'multipart/report; report-type=delivery-status; bo']) {
      const parsed = parseGmailMessage(message(top(contentType)), raw(contentType, 'Blah blah blah\r\n'));
      expect(parsed).toMatchObject({ body: 'Blah blah blah\n', bodySource: 'text/plain' });
      expect(parsed.bodyDefect).toMatch(/has no parts \(it names no boundary\): read as text$/);
    }
  });

  it('stays without a body when the multipart is only empty, or its body is not text', () => {
    const empty = 'multipart/alternative; boundary="nothing"';
    const parsedEmpty = parseGmailMessage(message(top(empty)), raw(empty, 'This is a multi-part message in MIME format.\r\n--nothing--\r\n'));
    expect(parsedEmpty).toMatchObject({ body: '', bodySource: 'none' });
    expect(parsedEmpty.bodyDefect).toBeUndefined();
    expect(parsedEmpty.parseWarnings).toContain('multipart/alternative top-level part has no children');

    const binary = 'multipart/mixed; boundary="x"';
    const parsedBinary = parseGmailMessage(message(top(binary)), raw(binary, Buffer.from([0x47, 0x49, 0x46, 0x00, 0x01, 0x02, 0x00, 0xff])));
    expect(parsedBinary).toMatchObject({ body: '', bodySource: 'none' });
    expect(parsedBinary.parseWarnings).toContain('multipart/mixed top-level part has no parts, and its body is not text');
  });

  it('asks for the raw message only for a top-level multipart that came without parts and bytes', () => {
    expect(bodyOnlyInRaw(top('multipart/mixed; boundary="b"'))).toBe(true);
    expect(bodyOnlyInRaw(top('multipart/mixed; boundary="b"', Buffer.from('text')))).toBe(false);
    expect(bodyOnlyInRaw(multipart('mixed', [leaf('text/plain', 'x')]))).toBe(false);
    expect(bodyOnlyInRaw(leaf('text/plain', 'x'))).toBe(false);
    expect(bodyOnlyInRaw(undefined)).toBe(false);
  });
});

describe('htmlToText', () => {
  it('turns table cells into tab-separated text and decodes numeric entities', () => {
    expect(htmlToText('<table><tr><td>a</td><td>b</td></tr></table>&#233;&#x1F680;')).toBe('a\tb\n\né🚀');
  });
});
