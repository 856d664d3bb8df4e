/** Calls `onLine` for each line of a text stream (the last one too, without a trailing newline). */
export function forEachLine(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffered = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    parts.forEach(onLine);
  });
  stream.on('end', () => {
    if (buffered) onLine(buffered);
  });
}
