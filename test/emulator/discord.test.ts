// Contract tests of the Discord webhook emulator through plain fetch, as a Discord client calls a
// webhook URL: messages, Discord's validation error bodies, unknown webhooks, rate limits, edits,
// deletes and injected faults.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  spawnDiscordEmulator,
  startDiscordEmulator,
  type RunningDiscordEmulator,
  type WebhookRecord,
} from '../../emulators/discord/index.js';

let emu: RunningDiscordEmulator;
let hook: WebhookRecord;

const json = { 'content-type': 'application/json' };

function post(url: string, body: unknown, query = ''): Promise<Response> {
  return fetch(`${url}${query}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
}

async function sendMany(n: number, url = hook.url): Promise<Response[]> {
  const out: Response[] = [];
  for (let i = 0; i < n; i++) out.push(await post(url, { content: `m${i}` }));
  return out;
}

const formError = (errors: unknown) => ({ code: 50035, errors, message: 'Invalid Form Body' });
const maxLength = (n: number) => ({
  _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${n} or fewer in length.` }],
});

beforeAll(async () => {
  emu = await startDiscordEmulator();
});

beforeEach(async () => {
  await emu.control.reset();
  hook = await emu.control.createWebhook({ name: 'Inbox' });
});

afterAll(async () => {
  await emu.close();
});

describe('execute webhook', () => {
  it('answers wait=true with the created message, which the control API lists', async () => {
    expect(hook.url).toMatch(new RegExp(`^${emu.url}/api/webhooks/\\d+/[\\w-]+$`));
    const embed = {
      title: 'Approve draft?',
      description: 'Re: invoice',
      color: 0x5865f2,
      fields: [{ name: 'From', value: 'a@example.com', inline: true }],
      footer: { text: 'durable-inbox' },
    };
    const res = await post(
      hook.url,
      { content: 'Draft ready', embeds: [embed], username: 'Inbox bot', allowed_mentions: { parse: [] } },
      '?wait=true',
    );
    expect(res.status).toBe(200);
    const message = (await res.json()) as Record<string, unknown>;
    expect(message).toMatchObject({
      type: 0,
      content: 'Draft ready',
      channel_id: hook.channelId,
      webhook_id: hook.id,
      author: { bot: true, id: hook.id, username: 'Inbox bot' },
      embeds: [{ ...embed, type: 'rich' }],
      edited_timestamp: null,
    });
    expect(message.id).toMatch(/^\d{17,20}$/);
    expect(message.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);

    const listed = await emu.control.messages(hook.id);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      webhookId: hook.id,
      threadId: null,
      deleted: false,
      allowedMentions: { parse: [] },
      message: { id: message.id, embeds: [{ title: 'Approve draft?' }] },
    });
  });

  it('answers 204 without wait, accepts the versioned path, and lists the message', async () => {
    const res = await post(hook.url, { content: 'fire and forget' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    const versioned = hook.url.replace('/api/webhooks/', '/api/v10/webhooks/');
    expect((await post(versioned, { content: 'v10' }, '?wait=false')).status).toBe(204);
    expect((await emu.control.messages()).map((m) => m.message.content)).toEqual(['fire and forget', 'v10']);
  });

  it('posts into a thread with thread_id', async () => {
    const threadId = '1100000000000000001';
    const message = (await (
      await post(hook.url, { content: 'in thread' }, `?wait=true&thread_id=${threadId}`)
    ).json()) as { id: string; channel_id: string };
    expect(message.channel_id).toBe(threadId);
    // A thread message is found only with its thread_id.
    expect((await fetch(`${hook.url}/messages/${message.id}`)).status).toBe(404);
    expect((await fetch(`${hook.url}/messages/${message.id}?thread_id=${threadId}`)).status).toBe(200);
    expect((await post(hook.url, { content: 'x' }, '?thread_id=abc')).status).toBe(400);
  });

  it('returns the webhook object for GET with the token', async () => {
    const res = await fetch(hook.url);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      application_id: null,
      avatar: null,
      channel_id: hook.channelId,
      guild_id: hook.guildId,
      id: hook.id,
      name: 'Inbox',
      type: 1,
      token: hook.token,
      url: hook.url,
    });
  });
});

describe('validation errors as Discord sends them', () => {
  it('content over 2000 characters (counted as code points)', async () => {
    expect((await post(hook.url, { content: '😀'.repeat(2000) })).status).toBe(204);
    const res = await post(hook.url, { content: 'x'.repeat(2001) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(formError({ content: maxLength(2000) }));
  });

  it('embed limits: count, title, description, fields, field name/value, footer, total size', async () => {
    // Rejected requests use up the webhook's bucket too (5 per 2 s); this test sends more than that.
    await emu.control.configure({ rateLimits: { enabled: false } });
    const cases: Array<[unknown, unknown]> = [
      [{ embeds: Array.from({ length: 11 }, () => ({ title: 't' })) }, { embeds: maxLength(10) }],
      [{ embeds: [{ title: 't'.repeat(257) }] }, { embeds: { 0: { title: maxLength(256) } } }],
      [
        { embeds: [{ title: 'ok' }, { description: 'd'.repeat(4097) }] },
        { embeds: { 1: { description: maxLength(4096) } } },
      ],
      [
        { embeds: [{ fields: Array.from({ length: 26 }, () => ({ name: 'n', value: 'v' })) }] },
        { embeds: { 0: { fields: maxLength(25) } } },
      ],
      [
        { embeds: [{ fields: [{ name: 'n'.repeat(257), value: 'v'.repeat(1025) }] }] },
        { embeds: { 0: { fields: { 0: { name: maxLength(256), value: maxLength(1024) } } } } },
      ],
      [{ embeds: [{ footer: { text: 'f'.repeat(2049) } }] }, { embeds: { 0: { footer: { text: maxLength(2048) } } } }],
      [
        { embeds: [{ fields: [{ name: 'only a name' }] }] },
        {
          embeds: {
            0: {
              fields: {
                0: { value: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] } },
              },
            },
          },
        },
      ],
      [
        { embeds: [{ description: 'd'.repeat(4000) }, { description: 'd'.repeat(2001) }] },
        {
          embeds: {
            _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED', message: 'Embed size exceeds maximum size of 6000' }],
          },
        },
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await post(hook.url, body);
      expect(res.status, JSON.stringify(errors)).toBe(400);
      expect(await res.json()).toEqual(formError(errors));
    }
    // Exactly at the limits is fine: 6000 in total, surrounding whitespace not counted.
    const atLimit = {
      embeds: [{ title: 't'.repeat(256), description: 'd'.repeat(4096) }, { description: `  ${'d'.repeat(1648)}  ` }],
    };
    expect((await post(hook.url, atLimit)).status).toBe(204);
  });

  it('an empty message is 400 code 50006', async () => {
    await emu.control.configure({ rateLimits: { enabled: false } });
    for (const body of [{}, { content: '' }, { content: '   ' }, { embeds: [] }, { username: 'x' }]) {
      const res = await post(hook.url, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ message: 'Cannot send an empty message', code: 50006 });
    }
  });

  it('invalid JSON is 400 code 50109; usernames are checked', async () => {
    const res = await fetch(hook.url, { method: 'POST', headers: json, body: '{"content": ' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ message: 'The request body contains invalid JSON.', code: 50109 });
    const named = await post(hook.url, { content: 'x', username: 'My Discord bot' });
    expect(await named.json()).toEqual(
      formError({
        username: { _errors: [{ code: 'USERNAME_INVALID_CONTAINS', message: 'Username cannot contain "discord"' }] },
      }),
    );
  });

  it('rejected requests are counted', async () => {
    await post(hook.url, { content: '' });
    expect(await emu.control.metrics()).toMatchObject({
      requests: 1,
      rejected: 1,
      byStatus: { 400: 1 },
      messagesCreated: 0,
    });
  });
});

describe('unknown webhooks', () => {
  it('unknown id is 404 10015, wrong token 401 50027, a deleted webhook 404', async () => {
    const unknown = await post(`${emu.url}/api/webhooks/1234567890123456789/${hook.token}`, { content: 'x' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ message: 'Unknown Webhook', code: 10015 });

    const wrongToken = await post(`${emu.url}/api/webhooks/${hook.id}/not-the-token`, { content: 'x' });
    expect(wrongToken.status).toBe(401);
    expect(await wrongToken.json()).toEqual({ message: 'Invalid Webhook Token', code: 50027 });

    await emu.control.deleteWebhook(hook.id);
    expect((await post(hook.url, { content: 'x' })).status).toBe(404);
    expect(await emu.control.messages()).toEqual([]);
  });
});

describe('rate limits', () => {
  it('5 requests per 2 s per webhook, then 429 with retry_after and headers; waiting retry_after succeeds', async () => {
    const ok = await sendMany(5);
    expect(ok.map((r) => r.status)).toEqual([204, 204, 204, 204, 204]);
    expect(ok.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0']);
    const first = ok[0]!.headers;
    expect(first.get('x-ratelimit-limit')).toBe('5');
    expect(Number(first.get('x-ratelimit-reset-after'))).toBeCloseTo(2, 0);
    expect(Number(first.get('x-ratelimit-reset'))).toBeCloseTo(Date.now() / 1000 + 2, 0);
    expect(first.get('x-ratelimit-bucket')).toMatch(/^[0-9a-f]{32}$/);

    const limited = await post(hook.url, { content: 'too fast' });
    expect(limited.status).toBe(429);
    const body = (await limited.json()) as { message: string; retry_after: number; global: boolean };
    expect(body).toEqual({ message: 'You are being rate limited.', retry_after: expect.any(Number), global: false });
    expect(body.retry_after).toBeGreaterThan(0);
    expect(body.retry_after).toBeLessThanOrEqual(2);
    expect(limited.headers.get('retry-after')).toBe(String(Math.ceil(body.retry_after)));
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-scope')).toBe('user');

    // Another webhook has its own bucket (the same bucket id: it excludes the top-level resource).
    const other = await emu.control.createWebhook();
    const otherRes = await post(other.url, { content: 'other' });
    expect(otherRes.status).toBe(204);
    expect(otherRes.headers.get('x-ratelimit-bucket')).toBe(first.get('x-ratelimit-bucket'));

    await new Promise((resolve) => setTimeout(resolve, body.retry_after * 1000));
    const after = await post(hook.url, { content: 'after waiting' });
    expect(after.status).toBe(204);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('4');
    expect((await emu.control.metrics()).rateLimited).toBe(1);
    expect(await emu.control.messages(hook.id)).toHaveLength(6);
  });

  it('per-channel message limit over all webhooks of the channel; limits are configurable', async () => {
    const config = await emu.control.configure({
      rateLimits: { webhook: { limit: 100 }, channel: { limit: 3, windowSeconds: 0.3 } },
    });
    expect(config.rateLimits).toEqual({
      enabled: true,
      webhook: { limit: 100, windowSeconds: 2 },
      channel: { limit: 3, windowSeconds: 0.3 },
    });
    const sibling = await emu.control.createWebhook({ channelId: hook.channelId });
    expect((await sendMany(2)).map((r) => r.status)).toEqual([204, 204]);
    expect((await sendMany(1, sibling.url))[0]!.status).toBe(204);
    const limited = await post(sibling.url, { content: 'fourth' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-scope')).toBe('shared');
    const { retry_after } = (await limited.json()) as { retry_after: number };
    expect(retry_after).toBeLessThanOrEqual(0.3);
    await new Promise((resolve) => setTimeout(resolve, retry_after * 1000));
    expect((await post(sibling.url, { content: 'later' })).status).toBe(204);

    await emu.control.configure({ rateLimits: { enabled: false } });
    expect((await sendMany(10)).every((r) => r.status === 204)).toBe(true);
  });
});

describe('edit and delete a sent message', () => {
  it('PATCH updates content and embeds; DELETE removes it', async () => {
    const sent = (await (
      await post(hook.url, { content: 'Approve?', embeds: [{ title: 'Pending' }] }, '?wait=true')
    ).json()) as { id: string };
    const messageUrl = `${hook.url}/messages/${sent.id}`;

    const edited = await fetch(messageUrl, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ embeds: [{ title: 'Approved', color: 0x57f287 }] }),
    });
    expect(edited.status).toBe(200);
    const message = (await edited.json()) as Record<string, unknown>;
    expect(message).toMatchObject({ id: sent.id, content: 'Approve?', embeds: [{ title: 'Approved', type: 'rich' }] });
    expect(message.edited_timestamp).toEqual(expect.any(String));
    expect((await emu.control.messages(hook.id))[0]).toMatchObject({
      edits: 1,
      message: { embeds: [{ title: 'Approved' }] },
    });

    const tooLong = await fetch(messageUrl, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ content: 'x'.repeat(2001) }),
    });
    expect(await tooLong.json()).toEqual(formError({ content: maxLength(2000) }));
    const emptied = await fetch(messageUrl, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ content: '', embeds: [] }),
    });
    expect(await emptied.json()).toEqual({ message: 'Cannot send an empty message', code: 50006 });

    expect((await fetch(messageUrl)).status).toBe(200);
    const deleted = await fetch(messageUrl, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    const gone = await fetch(messageUrl, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ content: 'again' }),
    });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ message: 'Unknown Message', code: 10008 });
    expect(await emu.control.messages(hook.id)).toEqual([]);
    expect(await emu.control.messages(hook.id, { includeDeleted: true })).toMatchObject([{ deleted: true }]);
    expect(await emu.control.metrics()).toMatchObject({ messagesCreated: 1, messagesEdited: 1, messagesDeleted: 1 });
  });

  it('another webhook cannot edit the message', async () => {
    const sent = (await (await post(hook.url, { content: 'mine' }, '?wait=true')).json()) as { id: string };
    const other = await emu.control.createWebhook();
    const res = await fetch(`${other.url}/messages/${sent.id}`, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ content: 'theirs' }),
    });
    expect(res.status).toBe(404);
  });
});

describe('faults', () => {
  it('forces 429s, then 5xx, for the next N requests', async () => {
    await emu.control.setFaults({ rateLimited: 2, retryAfterSeconds: 0.25, serverErrors: 1, serverErrorStatus: 502 });
    const statuses: number[] = [];
    const bodies: unknown[] = [];
    for (const res of await sendMany(4)) {
      statuses.push(res.status);
      bodies.push(res.status === 204 ? null : await res.json());
    }
    expect(statuses).toEqual([429, 429, 502, 204]);
    expect(bodies[0]).toEqual({ message: 'You are being rate limited.', retry_after: 0.25, global: false });
    expect(bodies[2]).toEqual({ message: '502: Bad Gateway', code: 0 });
    expect(await emu.control.metrics()).toMatchObject({ injectedFaults: 3, rateLimited: 2, messagesCreated: 1 });
    expect(await emu.control.setFaults({})).toMatchObject({ rateLimited: 0, serverErrors: 0 });
  });

  it('an injected global 429 says so', async () => {
    await emu.control.setFaults({ rateLimited: 1, global: true, retryAfterSeconds: 1.5 });
    const res = await post(hook.url, { content: 'x' });
    expect(res.status).toBe(429);
    expect(res.headers.get('x-ratelimit-global')).toBe('true');
    expect(res.headers.get('retry-after')).toBe('2');
    expect(await res.json()).toEqual({ message: 'You are being rate limited.', retry_after: 1.5, global: true });
  });

  it('rejects an invalid fault or config patch', async () => {
    await expect(emu.control.setFaults({ serverErrorStatus: 418 as 500 })).rejects.toThrow(/serverErrorStatus/);
    await expect(emu.control.configure({ rateLimits: { webhook: { limit: 0 } } })).rejects.toThrow(/limit/);
  });
});

describe('control API', () => {
  it('creates a webhook with a fixed id and token, rejects a bad one, and clears messages', async () => {
    const fixed = await emu.control.createWebhook({ id: '1200000000000000001', token: 'fixed-token', name: 'Alerts' });
    expect(fixed.url).toBe(`${emu.url}/api/webhooks/1200000000000000001/fixed-token`);
    expect((await post(fixed.url, { content: 'x' })).status).toBe(204);
    await expect(emu.control.createWebhook({ id: '1200000000000000001' })).rejects.toThrow(/exists/);
    await expect(emu.control.createWebhook({ id: 'abc' })).rejects.toThrow(/snowflake/);
    await expect(emu.control.createWebhook({ name: 7 as unknown as string })).rejects.toThrow(/name/);
    expect((await emu.control.listWebhooks()).map((w) => w.name).sort()).toEqual(['Alerts', 'Inbox']);
    await emu.control.clear();
    expect(await emu.control.messages()).toEqual([]);
    expect(await emu.control.listWebhooks()).toHaveLength(2);
  });
});

describe('standalone', () => {
  it('the CLI prints a webhook URL that works', async () => {
    const child = await spawnDiscordEmulator(['--webhook-limit', '2']);
    try {
      const res = await post(child.webhookUrl, { content: 'from the child' }, '?wait=true');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('2');
      expect((await child.control.messages()).map((m) => m.message.content)).toEqual(['from the child']);
    } finally {
      await child.close();
    }
  });
});
