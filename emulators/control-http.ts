// The emulators' control APIs (/__emulator/...) as their typed clients call them: JSON in, JSON out,
// and a failure that names the call and the emulator's message.

export class EmulatorControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'EmulatorControlError';
  }
}

export async function callControl<T>(baseUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${baseUrl}/__emulator/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const data: unknown = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const message = (data as { error?: { message?: string } } | undefined)?.error?.message ?? text;
    throw new EmulatorControlError(res.status, `${method} /__emulator/${path}: ${res.status} ${message}`);
  }
  return data as T;
}
