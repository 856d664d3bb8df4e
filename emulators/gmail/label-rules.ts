// What Gmail accepts as a user label's name and colour (labels.create / update / patch).
import { badRequest } from './errors.js';

/**
 * Names Gmail refuses with 400 "Invalid label name", compared case-insensitively: the system
 * label ids and the names Gmail shows for them, plus names users have hit when restoring mail
 * (collected by GAM-team/got-your-back). Gmail calls its own list "not exhaustive".
 */
const RESERVED_NAMES = new Set([
  'inbox', 'spam', 'trash', 'unread', 'starred', 'important', 'sent', 'draft', 'chat',
  'category_personal', 'category_social', 'category_promotions', 'category_updates', 'category_forums',
  'drafts', 'chats', 'sent mail', 'all mail', 'allmail', 'bin', 'muted', 'migrated', 'todo', 'todos', 'buzz', 'archive', 'archived',
]);

/** Gmail's label palette: the only backgroundColor and textColor values it accepts. */
const PALETTE = new Set(
  `000000 434343 666666 999999 cccccc efefef f3f3f3 ffffff fb4c2f ffad47 fad165 16a766
  43d692 4a86e8 a479e2 f691b3 f6c5be ffe6c7 fef1d1 b9e4d0 c6f3de c9daf8 e4d7f5 fcdee8
  efa093 ffd6a2 fce8b3 89d3b2 a0eac9 a4c2f4 d0bcf1 fbc8d9 e66550 ffbc6b fcda83 44b984
  68dfa9 6d9eeb b694e8 f7a7c0 cc3a21 eaa041 f2c960 149e60 3dc789 3c78d8 8e63ce e07798
  ac2b16 cf8933 d5ae49 0b804b 2a9c68 285bac 653e9b b65775 822111 a46a21 aa8831 076239
  1a764d 1c4587 41236d 83334c 464646 e7e7e7 0d3472 b6cff5 0d3b44 98d7e4 3d188e e3d7ff
  711a36 fbd3e0 8a1c0a f2b2a8 7a2e0b ffc8af 7a4706 ffdeb5 594c05 fbe983 684e07 fdedc1
  0b4f30 b3efd3 04502e a2dcc1 c2c2c2 4986e7 2da2bb b99aff 994a64 f691b2 ff7537 ffad46
  662e37 ebdbde cca6ac 094228 42d692 16a765 757575 1e53b8 007286 7858c3 c2185b d93025
  54240e 633e04 521d28 202124 083018`
    .split(/\s+/)
    .map((hex) => `#${hex}`),
);

/** The trimmed name, or 400 "Invalid label name" for an empty or reserved one. */
export function checkLabelName(name: unknown): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (!trimmed || RESERVED_NAMES.has(trimmed.toLowerCase())) throw badRequest('Invalid label name');
  return trimmed;
}

export interface LabelColor {
  textColor?: string;
  backgroundColor?: string;
}

/** Both colours, each from the palette (as Gmail lists them, lower-case). */
export function checkLabelColor(color: LabelColor): LabelColor {
  const { backgroundColor, textColor } = color;
  if (backgroundColor === undefined || textColor === undefined) throw badRequest('Label color requires both textColor and backgroundColor');
  for (const value of [backgroundColor, textColor]) {
    if (!PALETTE.has(value)) throw badRequest(`Label color ${value} is not on the allowed color palette`);
  }
  return { textColor, backgroundColor };
}
