// Gmail's system labels and the user-label records of one mailbox.
import { badRequest, GmailApiError, notFound } from './errors.js';
import { checkLabelColor, checkLabelName, type LabelColor } from './label-rules.js';

export interface LabelRecord {
  id: string;
  name: string;
  type: 'system' | 'user';
  messageListVisibility?: 'show' | 'hide';
  labelListVisibility?: 'labelShow' | 'labelShowIfUnread' | 'labelHide';
  color?: LabelColor;
}

export const SYSTEM_LABEL_IDS = [
  'INBOX',
  'SPAM',
  'TRASH',
  'UNREAD',
  'STARRED',
  'IMPORTANT',
  'SENT',
  'DRAFT',
  'CHAT',
  'CATEGORY_PERSONAL',
  'CATEGORY_SOCIAL',
  'CATEGORY_PROMOTIONS',
  'CATEGORY_UPDATES',
  'CATEGORY_FORUMS',
] as const;

/** Labels that only Gmail itself sets; messages.modify rejects them. */
const RESERVED_FOR_GMAIL = new Set(['DRAFT', 'SENT', 'CHAT']);

const nameConflict = (): GmailApiError => new GmailApiError(409, 'Label name exists or conflicts', 'aborted');

function systemLabel(id: string): LabelRecord {
  const hidden = id.startsWith('CATEGORY_') || id === 'CHAT';
  return hidden
    ? { id, name: id, type: 'system', messageListVisibility: 'hide', labelListVisibility: 'labelHide' }
    : { id, name: id, type: 'system' };
}

export class LabelTable {
  private readonly byId = new Map<string, LabelRecord>();
  private nextUserLabel = 1;

  constructor() {
    for (const id of SYSTEM_LABEL_IDS) this.byId.set(id, systemLabel(id));
  }

  snapshot(): { labels: LabelRecord[]; nextUserLabel: number } {
    return { labels: this.list().map((l) => ({ ...l })), nextUserLabel: this.nextUserLabel };
  }

  restore(state: { labels: LabelRecord[]; nextUserLabel: number }): void {
    this.byId.clear();
    for (const label of state.labels) this.byId.set(label.id, { ...label });
    this.nextUserLabel = state.nextUserLabel;
  }

  list(): LabelRecord[] {
    return [...this.byId.values()];
  }

  get(id: string): LabelRecord | undefined {
    return this.byId.get(id);
  }

  require(id: string): LabelRecord {
    const label = this.byId.get(id);
    if (!label) throw notFound('Requested entity was not found.');
    return label;
  }

  create(input: Omit<Partial<LabelRecord>, 'id' | 'type' | 'name'> & { name: unknown }): LabelRecord {
    const name = checkLabelName(input.name);
    if (this.findByName(name)) throw nameConflict();
    const label: LabelRecord = {
      id: `Label_${this.nextUserLabel++}`,
      name,
      type: 'user',
      messageListVisibility: input.messageListVisibility ?? 'show',
      labelListVisibility: input.labelListVisibility ?? 'labelShow',
      ...(input.color ? { color: checkLabelColor(input.color) } : {}),
    };
    this.byId.set(label.id, label);
    return label;
  }

  update(id: string, patch: Partial<Omit<LabelRecord, 'id' | 'type'>>): LabelRecord {
    const label = this.require(id);
    if (label.type === 'system') throw badRequest(`Invalid update for system label: ${id}`);
    if (patch.name !== undefined) {
      const name = checkLabelName(patch.name);
      const other = this.findByName(name);
      if (other && other.id !== id) throw nameConflict();
      label.name = name;
    }
    if (patch.messageListVisibility) label.messageListVisibility = patch.messageListVisibility;
    if (patch.labelListVisibility) label.labelListVisibility = patch.labelListVisibility;
    if (patch.color) label.color = checkLabelColor(patch.color);
    return label;
  }

  delete(id: string): void {
    const label = this.require(id);
    if (label.type === 'system') throw badRequest(`Invalid delete request for system label: ${id}`);
    this.byId.delete(id);
  }

  findByName(name: string): LabelRecord | undefined {
    const wanted = name.toLowerCase();
    for (const label of this.byId.values()) if (label.name.toLowerCase() === wanted) return label;
    return undefined;
  }

  /** Resolves an id or a name (as the Gmail UI and the control API allow); undefined when unknown. */
  resolve(idOrName: string): LabelRecord | undefined {
    return this.byId.get(idOrName) ?? this.byId.get(idOrName.toUpperCase()) ?? this.findByName(idOrName);
  }

  /** Validates label ids given to messages.modify and friends (ids only, as the API requires). */
  checkModifiable(ids: readonly string[]): void {
    for (const id of ids) {
      if (!this.byId.has(id)) throw badRequest(`Invalid label: ${id}`);
      if (RESERVED_FOR_GMAIL.has(id)) throw badRequest(`Invalid label: ${id}`);
    }
  }
}
