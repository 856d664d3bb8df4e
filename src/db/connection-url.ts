// Small helpers for postgresql:// URLs.

/** The database name in the URL's path. */
export function databaseNameOf(databaseUrl: string): string {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  if (!name) throw new Error(`no database name in ${redactUrl(databaseUrl)}`);
  return name;
}

/** The same server and credentials, another database. */
export function withDatabaseName(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/** The URL with its password replaced by `***`, for messages and logs. */
export function redactUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '<unparseable database URL>';
  }
}
