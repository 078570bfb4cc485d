const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** An item longer than this is not a Kubernetes object: the API server stores at most ~1.5 MiB per object. */
export const MAX_LIST_ITEM_BYTES = 16 * 1024 * 1024;
/** A list's envelope (everything but its items: kind, apiVersion, metadata) is a few hundred bytes. */
export const MAX_LIST_ENVELOPE_BYTES = 1024 * 1024;

/** The list body is not a JSON object with an `items` array of objects, or breaks a bound. */
export class MalformedListError extends Error {
  override readonly name = 'MalformedListError';
}

/**
 * Cuts a list response (`{"kind":"…List","items":[{…},{…}],"metadata":{…}}`) into its items' JSON texts as its bytes
 * arrive, so a list of 50,000 objects is never one 60 MB string nor one parsed tree: each item is parsed and stored
 * before the next arrives, as a watch's events are. The envelope comes back at the end with its items left out
 * (`"items":[]`). Only what JSON needs to find the items is tracked (nesting, strings, escapes); the items' and the
 * envelope's own syntax is checked by JSON.parse afterwards.
 */
export class ListItemSplitter {
  /** Nesting depth before the current byte: 1 inside the top-level object, 2 inside an array of it. */
  private depth = 0;
  private inString = false;
  /** The previous chunk ended inside a string on a backslash: this chunk's first byte is escaped. */
  private escapePending = false;
  /** The last string closed at depth 1: the key of the value that follows. */
  private lastTopLevelString = '';
  private topLevelStringStart: Buffer[] | undefined;
  /** Inside the `items` array (depth 2 means between its items). */
  private inItems = false;
  private itemsSeen = false;
  /** The bytes of the item being cut, from earlier chunks. */
  private item: Buffer[] = [];
  private itemBytes = 0;
  private readonly envelope: Buffer[] = [];
  private envelopeBytes = 0;
  private done = false;

  constructor(
    private readonly maxItemBytes = MAX_LIST_ITEM_BYTES,
    private readonly maxEnvelopeBytes = MAX_LIST_ENVELOPE_BYTES,
  ) {}

  /** The items this chunk completes, as JSON texts in order; the unfinished rest is kept. */
  push(chunk: Buffer): string[] {
    const items: string[] = [];
    // Where the part of this chunk that belongs to the current item (or to the envelope) starts.
    let itemStart = this.itemBytes > 0 ? 0 : -1;
    let envelopeStart = this.inItems ? -1 : 0;
    let stringStart = this.topLevelStringStart !== undefined ? 0 : -1;
    for (let index = 0; index < chunk.length; index += 1) {
      if (this.inString) {
        index = this.stringEnd(chunk, index);
        if (index < 0) break;
        this.inString = false;
        if (this.depth === 1 && stringStart >= 0) {
          this.lastTopLevelString = this.closeTopLevelString(chunk.subarray(stringStart, index));
          stringStart = -1;
        }
        continue;
      }
      const byte = chunk[index] as number;
      if (byte === QUOTE) {
        if (this.depth === 0)
          this.malformed(this.done ? 'content after the end of the list' : 'the body is not a JSON object');
        if (this.inItems && this.depth === 2) this.malformed('an item of "items" is not an object');
        this.inString = true;
        if (this.depth === 1) {
          stringStart = index + 1;
          this.topLevelStringStart = [];
        }
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (this.depth === 0) {
          if (this.done) this.malformed('content after the end of the list');
          if (byte !== OPEN_OBJECT) this.malformed('the body is not a JSON object');
        }
        if (this.inItems && this.depth === 2) {
          if (byte !== OPEN_OBJECT) this.malformed('an item of "items" is not an object');
          itemStart = index;
        }
        this.depth += 1;
        if (this.depth === 2 && byte === OPEN_ARRAY && this.lastTopLevelString === 'items' && !this.itemsSeen) {
          // Everything up to and including the `[` belongs to the envelope; the items go their own way.
          this.appendEnvelope(chunk.subarray(envelopeStart, index + 1));
          envelopeStart = -1;
          this.inItems = true;
          this.itemsSeen = true;
        }
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        this.depth -= 1;
        if (this.depth < 0) this.malformed('unbalanced brackets');
        if (this.inItems && this.depth === 2 && itemStart >= 0) {
          items.push(this.takeItem(chunk.subarray(itemStart, index + 1)));
          itemStart = -1;
        } else if (this.inItems && this.depth === 1) {
          // The `]` closing the items starts the envelope again.
          this.inItems = false;
          envelopeStart = index;
        }
        if (this.depth === 0) this.done = true;
      } else if (byte > 0x20 && byte !== 0x2c) {
        // Anything else but whitespace and commas: part of a number, `true`, `false` or `null`.
        if (this.depth === 0)
          this.malformed(this.done ? 'content after the end of the list' : 'the body is not a JSON object');
        if (this.inItems && this.depth === 2) this.malformed('an item of "items" is not an object');
      }
    }
    if (itemStart >= 0) this.keepItemPart(chunk.subarray(itemStart));
    if (envelopeStart >= 0) this.appendEnvelope(chunk.subarray(envelopeStart));
    if (stringStart >= 0) this.topLevelStringStart?.push(chunk.subarray(stringStart));
    return items;
  }

  /** The envelope's JSON text with `"items":[]`, once the whole body has been pushed. */
  end(): string {
    if (!this.done || this.inString) this.malformed('the body ended before the list did');
    if (!this.itemsSeen) this.malformed('the list has no "items" array');
    return Buffer.concat(this.envelope).toString('utf8');
  }

  /**
   * The index of the quote ending the string this chunk continues from `from`, or -1 if it runs past the chunk. A
   * backslash escapes the byte after it, which may be the next chunk's first. Strings are short (keys, names,
   * timestamps), so a plain loop beats a native search per string.
   */
  private stringEnd(chunk: Buffer, from: number): number {
    let index = from;
    if (this.escapePending) {
      this.escapePending = false;
      index += 1;
    }
    for (; index < chunk.length; index += 1) {
      const byte = chunk[index];
      if (byte === QUOTE) return index;
      if (byte === BACKSLASH) {
        if (index + 1 === chunk.length) this.escapePending = true;
        index += 1;
      }
    }
    return -1;
  }

  private closeTopLevelString(last: Buffer): string {
    const parts = this.topLevelStringStart ?? [];
    this.topLevelStringStart = undefined;
    // Only the key `items` matters; longer strings (values) need not be kept whole.
    const length = parts.reduce((sum, part) => sum + part.length, last.length);
    return length > 16 ? '' : Buffer.concat([...parts, last]).toString('utf8');
  }

  private keepItemPart(part: Buffer): void {
    this.itemBytes += part.length;
    if (this.itemBytes > this.maxItemBytes) this.malformed(`an item of more than ${this.maxItemBytes} bytes`);
    this.item.push(part);
  }

  private takeItem(last: Buffer): string {
    if (this.itemBytes + last.length > this.maxItemBytes) {
      this.malformed(`an item of more than ${this.maxItemBytes} bytes`);
    }
    const text = this.item.length === 0 ? last.toString('utf8') : Buffer.concat([...this.item, last]).toString('utf8');
    this.item = [];
    this.itemBytes = 0;
    return text;
  }

  private appendEnvelope(part: Buffer): void {
    this.envelopeBytes += part.length;
    if (this.envelopeBytes > this.maxEnvelopeBytes) {
      this.malformed(`a list envelope of more than ${this.maxEnvelopeBytes} bytes besides its items`);
    }
    this.envelope.push(part);
  }

  private malformed(reason: string): never {
    throw new MalformedListError(`malformed list response: ${reason}`);
  }
}
