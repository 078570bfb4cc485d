const NEWLINE = 0x0a;

/**
 * A line longer than this is not a watch event: kube-apiserver's objects are at most ~1.5 MiB (etcd's request
 * limit).
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** The stream sent a line longer than the splitter's bound without ending it. */
export class LineTooLongError extends Error {
  override readonly name = 'LineTooLongError';
}

/**
 * Splits a byte stream into newline-terminated UTF-8 lines, chunk by chunk, without joining the chunks into one
 * growing string: each line is decoded once from the bytes that hold it (a newline byte never occurs inside a
 * multi-byte UTF-8 character, so cutting at one is always safe). A line may not grow past `maxLineBytes`.
 */
export class LineSplitter {
  private partial: Buffer[] = [];
  private partialBytes = 0;

  constructor(private readonly maxLineBytes = MAX_LINE_BYTES) {}

  /** The lines this chunk completes, in order and without their newline; the unfinished rest is kept. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline >= 0; newline = chunk.indexOf(NEWLINE, start)) {
      if (this.partialBytes + newline - start > this.maxLineBytes) this.tooLong();
      if (this.partial.length === 0) lines.push(chunk.toString('utf8', start, newline));
      else {
        this.partial.push(chunk.subarray(start, newline));
        lines.push(Buffer.concat(this.partial).toString('utf8'));
        this.partial = [];
        this.partialBytes = 0;
      }
      start = newline + 1;
    }
    if (start < chunk.length) {
      this.partialBytes += chunk.length - start;
      if (this.partialBytes > this.maxLineBytes) this.tooLong();
      this.partial.push(chunk.subarray(start));
    }
    return lines;
  }

  /** What is left after the last newline (the stream's last line, if it had no newline); empties the splitter. */
  rest(): string {
    const rest = Buffer.concat(this.partial).toString('utf8');
    this.partial = [];
    this.partialBytes = 0;
    return rest;
  }

  private tooLong(): never {
    throw new LineTooLongError(`a line of more than ${this.maxLineBytes} bytes without a newline`);
  }
}
