// Execute Webhook / Edit Webhook Message bodies checked the way Discord checks them, with its error
// bodies: 50035 "Invalid Form Body" with a tree of `_errors` per JSON path, 50006 for an empty message.
// Lengths count Unicode code points after trimming surrounding whitespace, as Discord documents for embeds.

export interface FieldError {
  code: string;
  message: string;
}

export interface ErrorTree {
  _errors?: FieldError[];
  [key: string]: ErrorTree | FieldError[] | undefined;
}

export interface DiscordErrorBody {
  code: number;
  message: string;
  errors?: ErrorTree;
}

export interface EmbedField {
  name: string;
  value: string;
  inline?: boolean;
}

/** An embed as stored and returned: what the client sent, plus `type: "rich"` when it gave none. */
export type Embed = Record<string, unknown> & { type: string };

export interface MessageInput {
  content?: string | null;
  username?: string;
  avatar_url?: string;
  tts?: boolean;
  embeds?: Embed[] | null;
  allowed_mentions?: Record<string, unknown> | null;
  components?: unknown[] | null;
  flags?: number;
  thread_name?: string;
}

export type ValidationResult = { ok: true; input: MessageInput } | { ok: false; body: DiscordErrorBody };

export const LIMITS = {
  content: 2000,
  embeds: 10,
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footerText: 2048,
  authorName: 256,
  embedTotal: 6000,
  usernameMin: 1,
  usernameMax: 80,
} as const;

export const invalidFormBody = (errors: ErrorTree): DiscordErrorBody => ({
  code: 50035,
  errors,
  message: 'Invalid Form Body',
});

export const EMPTY_MESSAGE: DiscordErrorBody = { message: 'Cannot send an empty message', code: 50006 };

const length = (s: string) => [...s.trim()].length;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

class Errors {
  readonly tree: ErrorTree = {};
  any = false;

  add(path: Array<string | number>, error: FieldError): void {
    let node = this.tree;
    for (const key of path) {
      const k = String(key);
      node[k] ??= {};
      node = node[k] as ErrorTree;
    }
    (node._errors ??= []).push(error);
    this.any = true;
  }
}

const maxLength = (n: number): FieldError => ({
  code: 'BASE_TYPE_MAX_LENGTH',
  message: `Must be ${n} or fewer in length.`,
});
const required: FieldError = { code: 'BASE_TYPE_REQUIRED', message: 'This field is required' };
const notString = (v: unknown): FieldError => ({
  code: 'BASE_TYPE_STRING',
  message: `Could not interpret "${JSON.stringify(v)}" as string.`,
});

function checkString(
  errors: Errors,
  path: Array<string | number>,
  value: unknown,
  max: number,
  isRequired = false,
): string | undefined {
  if (value === undefined || value === null) {
    if (isRequired) errors.add(path, required);
    return undefined;
  }
  if (typeof value !== 'string') {
    errors.add(path, notString(value));
    return undefined;
  }
  if (length(value) > max) errors.add(path, maxLength(max));
  return value;
}

/** Characters an embed counts towards the 6000 total: title, description, field names and values, footer text, author name. */
function embedSize(embed: Record<string, unknown>): number {
  const text = (v: unknown) => (typeof v === 'string' ? length(v) : 0);
  let size = text(embed.title) + text(embed.description);
  if (isObject(embed.footer)) size += text(embed.footer.text);
  if (isObject(embed.author)) size += text(embed.author.name);
  if (Array.isArray(embed.fields)) {
    for (const f of embed.fields) if (isObject(f)) size += text(f.name) + text(f.value);
  }
  return size;
}

function checkEmbed(errors: Errors, path: Array<string | number>, embed: unknown): void {
  if (!isObject(embed)) {
    errors.add(path, { code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' });
    return;
  }
  checkString(errors, [...path, 'title'], embed.title, LIMITS.title);
  checkString(errors, [...path, 'description'], embed.description, LIMITS.description);
  checkString(errors, [...path, 'url'], embed.url, 2048);
  if (embed.color !== undefined && embed.color !== null) {
    if (typeof embed.color !== 'number' || !Number.isInteger(embed.color)) {
      errors.add([...path, 'color'], {
        code: 'NUMBER_TYPE_COERCE',
        message: `Value "${String(embed.color)}" is not int.`,
      });
    } else if (embed.color < 0 || embed.color > 0xffffff) {
      errors.add([...path, 'color'], {
        code: 'NUMBER_TYPE_MAX',
        message: 'int value should be less than or equal to 16777215.',
      });
    }
  }
  if (embed.timestamp !== undefined && embed.timestamp !== null) {
    if (typeof embed.timestamp !== 'string' || Number.isNaN(Date.parse(embed.timestamp))) {
      errors.add([...path, 'timestamp'], {
        code: 'DATE_TYPE_PARSE',
        message: `Could not parse ${String(embed.timestamp)}. Should be ISO8601.`,
      });
    }
  }
  if (embed.footer !== undefined && embed.footer !== null) {
    if (!isObject(embed.footer))
      errors.add([...path, 'footer'], {
        code: 'DICT_TYPE_CONVERT',
        message: 'Only dictionaries may be used in a DictType',
      });
    else checkString(errors, [...path, 'footer', 'text'], embed.footer.text, LIMITS.footerText, true);
  }
  if (embed.author !== undefined && embed.author !== null) {
    if (!isObject(embed.author))
      errors.add([...path, 'author'], {
        code: 'DICT_TYPE_CONVERT',
        message: 'Only dictionaries may be used in a DictType',
      });
    else checkString(errors, [...path, 'author', 'name'], embed.author.name, LIMITS.authorName, true);
  }
  if (embed.fields !== undefined && embed.fields !== null) {
    if (!Array.isArray(embed.fields)) {
      errors.add([...path, 'fields'], {
        code: 'LIST_TYPE_CONVERT',
        message: 'Only iterables may be used in a ListType',
      });
    } else {
      if (embed.fields.length > LIMITS.fields) errors.add([...path, 'fields'], maxLength(LIMITS.fields));
      embed.fields.forEach((field, i) => {
        const fieldPath = [...path, 'fields', i];
        if (!isObject(field)) {
          errors.add(fieldPath, { code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' });
          return;
        }
        checkString(errors, [...fieldPath, 'name'], field.name, LIMITS.fieldName, true);
        checkString(errors, [...fieldPath, 'value'], field.value, LIMITS.fieldValue, true);
      });
    }
  }
}

/**
 * Checks an Execute Webhook body (`mode: 'execute'`) or an Edit Webhook Message body (`mode: 'edit'`,
 * where username, avatar_url, tts and thread_name are not accepted and nothing is required).
 * Unknown keys are ignored, as Discord does.
 */
export function validateMessageBody(body: unknown, mode: 'execute' | 'edit'): ValidationResult {
  const errors = new Errors();
  if (!isObject(body)) {
    errors.add([], { code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' });
    return { ok: false, body: invalidFormBody(errors.tree) };
  }
  const input: MessageInput = {};

  if (body.content !== undefined) {
    const content = checkString(errors, ['content'], body.content, LIMITS.content);
    input.content = content ?? null;
  }
  if (mode === 'execute') {
    if (body.username !== undefined && body.username !== null) {
      if (typeof body.username !== 'string') errors.add(['username'], notString(body.username));
      else {
        const n = length(body.username);
        if (n < LIMITS.usernameMin || n > LIMITS.usernameMax) {
          errors.add(['username'], {
            code: 'BASE_TYPE_BAD_LENGTH',
            message: `Must be between ${LIMITS.usernameMin} and ${LIMITS.usernameMax} in length.`,
          });
        } else {
          for (const word of ['discord', 'clyde']) {
            if (body.username.toLowerCase().includes(word)) {
              errors.add(['username'], {
                code: 'USERNAME_INVALID_CONTAINS',
                message: `Username cannot contain "${word}"`,
              });
            }
          }
        }
        input.username = body.username.trim();
      }
    }
    const avatar = checkString(errors, ['avatar_url'], body.avatar_url, 2048);
    if (avatar !== undefined) input.avatar_url = avatar;
    if (body.tts !== undefined && body.tts !== null) {
      if (typeof body.tts !== 'boolean')
        errors.add(['tts'], { code: 'BASE_TYPE_BOOLEAN', message: 'Must be either true or false.' });
      else input.tts = body.tts;
    }
    const threadName = checkString(errors, ['thread_name'], body.thread_name, 100);
    if (threadName !== undefined) input.thread_name = threadName;
  }

  if (body.embeds !== undefined) {
    if (body.embeds === null) input.embeds = null;
    else if (!Array.isArray(body.embeds)) {
      errors.add(['embeds'], { code: 'LIST_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' });
    } else {
      if (body.embeds.length > LIMITS.embeds) errors.add(['embeds'], maxLength(LIMITS.embeds));
      body.embeds.forEach((embed, i) => checkEmbed(errors, ['embeds', i], embed));
      const total = body.embeds.reduce<number>((sum, e) => sum + (isObject(e) ? embedSize(e) : 0), 0);
      if (total > LIMITS.embedTotal) {
        errors.add(['embeds'], {
          code: 'MAX_EMBED_SIZE_EXCEEDED',
          message: `Embed size exceeds maximum size of ${LIMITS.embedTotal}`,
        });
      }
      input.embeds = body.embeds
        .filter(isObject)
        .map((e) => ({ ...e, type: typeof e.type === 'string' ? e.type : 'rich' }));
    }
  }
  if (body.allowed_mentions !== undefined) {
    if (body.allowed_mentions !== null && !isObject(body.allowed_mentions)) {
      errors.add(['allowed_mentions'], {
        code: 'DICT_TYPE_CONVERT',
        message: 'Only dictionaries may be used in a DictType',
      });
    } else input.allowed_mentions = body.allowed_mentions;
  }
  if (body.components !== undefined) {
    // Accepted and stored as sent; not checked (non-application webhooks may only send link buttons).
    if (body.components !== null && !Array.isArray(body.components)) {
      errors.add(['components'], { code: 'LIST_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' });
    } else input.components = body.components;
  }
  if (body.flags !== undefined && body.flags !== null) {
    if (typeof body.flags !== 'number' || !Number.isInteger(body.flags)) {
      errors.add(['flags'], { code: 'NUMBER_TYPE_COERCE', message: `Value "${String(body.flags)}" is not int.` });
    } else input.flags = body.flags;
  }

  if (errors.any) return { ok: false, body: invalidFormBody(errors.tree) };
  if (mode === 'execute' && isEmpty(input)) return { ok: false, body: EMPTY_MESSAGE };
  return { ok: true, input };
}

/** No content (or only whitespace), no embeds and no components: Discord's "empty message". */
export function isEmpty(m: {
  content?: string | null;
  embeds?: unknown[] | null;
  components?: unknown[] | null;
}): boolean {
  return !(m.content ?? '').trim() && !(m.embeds ?? []).length && !(m.components ?? []).length;
}
