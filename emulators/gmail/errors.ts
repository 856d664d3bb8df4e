// Google's JSON error format, as the Gmail API returns it:
// {error: {code, message, errors: [{message, domain, reason, ...}], status}}.

export interface GoogleErrorItem {
  message: string;
  domain: string;
  reason: string;
  location?: string;
  locationType?: string;
  extendedHelp?: string;
}

export interface GoogleErrorBody {
  error: {
    code: number;
    message: string;
    errors: GoogleErrorItem[];
    status: string;
    /** google.rpc error details (ErrorInfo, Help, LocalizedMessage), as newer Google answers carry them. */
    details?: Array<Record<string, unknown>>;
  };
}

const statusByCode: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** An error that the HTTP layer turns into Google's error body (and optional headers such as Retry-After). */
export class GmailApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly reason: string,
    readonly domain = 'global',
    readonly headers: Record<string, string> = {},
    readonly extra: Partial<GoogleErrorItem> = {},
    readonly details: Array<Record<string, unknown>> = [],
  ) {
    super(message);
    this.name = 'GmailApiError';
  }

  toBody(): GoogleErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        errors: [{ message: this.message, domain: this.domain, reason: this.reason, ...this.extra }],
        status: statusByCode[this.code] ?? 'UNKNOWN',
        ...(this.details.length > 0 ? { details: this.details } : {}),
      },
    };
  }
}

export const badRequest = (message: string, reason = 'invalidArgument'): GmailApiError =>
  new GmailApiError(400, message, reason);

export const notFound = (message = 'Requested entity was not found.'): GmailApiError =>
  new GmailApiError(404, message, 'notFound');

const SEE_DEVCONSOLE =
  'Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';

/** A bearer token that is unknown, expired or revoked. */
export const unauthenticated = (): GmailApiError =>
  new GmailApiError(
    401,
    `Request had invalid authentication credentials. ${SEE_DEVCONSOLE}`,
    'authError',
    'global',
    { 'WWW-Authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
    { message: 'Invalid Credentials', location: 'Authorization', locationType: 'header' },
  );

/** No Authorization header at all. */
export const missingCredentials = (): GmailApiError =>
  new GmailApiError(
    401,
    `Request is missing required authentication credential. ${SEE_DEVCONSOLE}`,
    'required',
    'global',
    { 'WWW-Authenticate': 'Bearer realm="https://accounts.google.com/"' },
    { message: 'Login Required.', location: 'Authorization', locationType: 'header' },
  );

export const forbidden = (message: string, reason = 'forbidden'): GmailApiError =>
  new GmailApiError(403, message, reason);

export const backendError = (): GmailApiError => new GmailApiError(500, 'Backend Error', 'backendError');

export const serviceUnavailable = (): GmailApiError =>
  new GmailApiError(503, 'The service is currently unavailable.', 'backendError');

/**
 * The Gmail API is not enabled in the Cloud project of the OAuth client the token was issued to.
 * Google's body: the legacy `errors` item (domain usageLimits, reason accessNotConfigured) and the
 * google.rpc details (ErrorInfo SERVICE_DISABLED with the consumer project, a localized message,
 * the activation link), as captured in public bug reports between 2020 and 2025.
 */
export const accessNotConfigured = (projectNumber: string): GmailApiError => {
  const activationUrl = `https://console.developers.google.com/apis/api/gmail.googleapis.com/overview?project=${projectNumber}`;
  const message =
    `Gmail API has not been used in project ${projectNumber} before or it is disabled. Enable it by visiting ${activationUrl} then retry. ` +
    'If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry.';
  return new GmailApiError(403, message, 'accessNotConfigured', 'usageLimits', {}, { extendedHelp: 'https://console.developers.google.com' }, [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'SERVICE_DISABLED',
      domain: 'googleapis.com',
      metadata: { consumer: `projects/${projectNumber}`, service: 'gmail.googleapis.com', serviceTitle: 'Gmail API', containerInfo: projectNumber, activationUrl },
    },
    { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message },
    { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Google developers console API activation', url: activationUrl }] },
  ]);
};

/** users.watch on a topic where gmail-api-push@system.gserviceaccount.com may not publish (Gmail's test message fails). */
export const publishDenied = (topicName: string): GmailApiError =>
  new GmailApiError(403, `Error sending test message to Cloud PubSub ${topicName} : User not authorized to perform this action.`, 'forbidden');
