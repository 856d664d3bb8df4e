export { createGmailClient, DEFAULT_GMAIL_TIMEOUT_MS, type GmailClient, type GmailClientOptions, type GmailTokens } from './client.js';
export {
  GmailError,
  GmailRateLimitError,
  GmailAuthError,
  GmailNotFoundError,
  GmailServerError,
  GmailBadRequestError,
  GmailPermissionError,
  GmailConflictError,
  GmailNetworkError,
  GmailUnexpectedError,
  MIN_RETRY_AFTER_MS,
  mapGmailError,
  parseRetryAfter,
  type GmailErrorContext,
  type GmailErrorDetails,
  type GmailResource,
} from './errors.js';
export {
  buildPlainTextMessage,
  buildReply,
  replySubject,
  replyReferences,
  replyRecipients,
  toRaw,
  extractBody,
  parseGmailMessage,
  decodeHeaders,
  getHeader,
  parseContentType,
  extractMessageIds,
  MAX_REFERENCES,
  type BuiltReply,
  type ExtractedBody,
  type PlainTextMessageInput,
  type ReplyInput,
  type ReplyParent,
  type TransferEncoding,
} from './mime.js';
export { formatAddress, formatAddressList, parseAddressList, parseSender, sameAddress, senderAddress } from './addresses.js';
export { htmlToText } from './html-text.js';
export {
  GmailService,
  BATCH_MODIFY_MAX_IDS,
  type ListHistoryOptions,
  type ListMessagesOptions,
  type MessageFormat,
  type WatchOptions,
} from './gmail-service.js';
export { findSentReplyAfter, latestInboundMessage } from './thread-queries.js';
export type * from '../mail/message.js';
