const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** Nesting depth inside an item (the top-level object is 1, the `items` array 2), and inside the item's metadata. */
const ITEM_DEPTH = 3;
const ITEM_METADATA_DEPTH = 4;
const METADATA_KEY = Buffer.from('metadata');
const MANAGED_FIELDS_KEY = Buffer.from('managedFields');

/** An item longer than this is not a Kubernetes object: the API server stores at most ~1.5 MiB per object. */
export const MAX_LIST_ITEM_BYTES = 16 * 1024 * 1024;
/** A list's envelope (everything but its items: kind, apiVersion, metadata) is a few hundred bytes. */
export const MAX_LIST_ENVELOPE_BYTES = 1024 * 1024;

/** The list body is not a JSON object with an `items` array of objects, or breaks a bound. */
export class MalformedListError extends Error {
  override readonly name = 'MalformedListError';
}

export interface ListItemSplitterOptions {
  /** Default `MAX_LIST_ITEM_BYTES`. */
  readonly maxItemBytes?: number;
  /** Default `MAX_LIST_ENVELOPE_BYTES`. */
  readonly maxEnvelopeBytes?: number;
  /**
   * Leave each item's `metadata.managedFields` out of its text, for a reader that would drop them after parsing
   * anyway: they are often half an object's bytes and most of its small objects, all of them garbage once parsed. Only
   * the key as the API server writes it is recognized (a `managedFields` key spelled with escapes stays in), so the
   * reader must still drop them itself; this only spares it the work.
   */
  readonly omitManagedFields?: boolean;
}

/** A byte range of the current item, left out of its text. */
interface Cut {
  readonly from: number;
  readonly to: number;
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

  private readonly maxItemBytes: number;
  private readonly maxEnvelopeBytes: number;
  private readonly omitManagedFields: boolean;
  // What leaving out `metadata.managedFields` needs; offsets count bytes from the current item's `{`.
  /** Where the string being read began (its opening quote), when it may be a key that matters. */
  private keyStart = -1;
  /** The last string closed directly inside the item was `"metadata"`: an object opened now is the item's metadata. */
  private metadataKey = false;
  private inMetadata = false;
  /** Where the last key closed directly inside the metadata began, if it was `"managedFields"`; else -1. */
  private managedFieldsKeyStart = -1;
  /** The last comma directly inside the metadata (-1: none since it opened). */
  private metadataComma = -1;
  /** The managedFields member being read: from its key; `to` is set once its value closed. */
  private omitted: { from: number; commaBefore: number; to: number } | undefined;
  private cuts: Cut[] = [];

  constructor(options: ListItemSplitterOptions = {}) {
    this.maxItemBytes = options.maxItemBytes ?? MAX_LIST_ITEM_BYTES;
    this.maxEnvelopeBytes = options.maxEnvelopeBytes ?? MAX_LIST_ENVELOPE_BYTES;
    this.omitManagedFields = options.omitManagedFields ?? false;
  }

  /** The items this chunk completes, as JSON texts in order; the unfinished rest is kept. */
  push(chunk: Buffer): string[] {
    const items: string[] = [];
    // Where the part of this chunk that belongs to the current item (or to the envelope) starts.
    let itemStart = this.itemBytes > 0 ? 0 : -1;
    let envelopeStart = this.inItems ? -1 : 0;
    let stringStart = this.topLevelStringStart !== undefined ? 0 : -1;
    // The hottest state lives in locals for the loop (every byte reads it) and is written back at the end.
    let depth = this.depth;
    let inString = this.inString;
    const omit = this.omitManagedFields;
    const length = chunk.length;
    let inItems = this.inItems;
    let skipAbove = this.skipAbove();
    for (let index = 0; index < length; index += 1) {
      if (inString) {
        index = this.stringEnd(chunk, index);
        if (index < 0) break;
        inString = false;
        if (depth === 1 && stringStart >= 0) {
          this.lastTopLevelString = this.closeTopLevelString(chunk.subarray(stringStart, index));
          stringStart = -1;
        } else if (this.keyStart >= 0) this.closeKey(chunk, itemStart, index, depth);
        continue;
      }
      if (inItems && depth > skipAbove) {
        // Deep inside an item nothing but nesting and strings matters: a tight loop runs to the bracket that closes
        // back to `skipAbove` (handled below as any byte) or to the chunk's end. Most of a list's bytes pass here.
        for (; index < length; index += 1) {
          const byte = chunk[index];
          if (byte === QUOTE) {
            for (index += 1; index < length; index += 1) {
              const inside = chunk[index];
              if (inside === QUOTE) break;
              if (inside === BACKSLASH) index += 1;
            }
            if (index >= length) {
              inString = true;
              // A backslash as the chunk's last byte stepped past it: the next chunk's first byte is escaped.
              this.escapePending = index > length;
            }
          } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) depth += 1;
          else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
            if (depth === skipAbove + 1) break;
            depth -= 1;
          }
        }
        if (index >= length) break;
      }
      const byte = chunk[index] as number;
      if (byte === QUOTE) {
        if (depth === 0)
          this.malformed(this.done ? 'content after the end of the list' : 'the body is not a JSON object');
        if (inItems && depth === 2) this.malformed('an item of "items" is not an object');
        inString = true;
        if (depth === 1) {
          stringStart = index + 1;
          this.topLevelStringStart = [];
        } else if (omit && inItems) {
          this.abandonClosedOmission();
          if (depth === ITEM_DEPTH || (this.inMetadata && depth === ITEM_METADATA_DEPTH)) {
            this.keyStart = this.itemBytes + index - itemStart;
          }
        }
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (depth === 0) {
          if (this.done) this.malformed('content after the end of the list');
          if (byte !== OPEN_OBJECT) this.malformed('the body is not a JSON object');
        }
        if (inItems && depth === 2) {
          if (byte !== OPEN_OBJECT) this.malformed('an item of "items" is not an object');
          itemStart = index;
        }
        depth += 1;
        if (depth === 2 && byte === OPEN_ARRAY && this.lastTopLevelString === 'items' && !this.itemsSeen) {
          // Everything up to and including the `[` belongs to the envelope; the items go their own way.
          this.appendEnvelope(chunk.subarray(envelopeStart, index + 1));
          envelopeStart = -1;
          this.inItems = true;
          inItems = true;
          this.itemsSeen = true;
        } else if (omit && inItems) {
          this.openedInItem(byte, depth);
          skipAbove = this.skipAbove();
        }
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        depth -= 1;
        if (depth < 0) this.malformed('unbalanced brackets');
        if (this.inMetadata) {
          this.closedInMetadata(this.itemBytes + index - itemStart, depth);
          skipAbove = this.skipAbove();
        }
        if (depth === 2 && inItems && itemStart >= 0) {
          items.push(this.takeItem(chunk.subarray(itemStart, index + 1)));
          itemStart = -1;
        } else if (depth === 1 && inItems) {
          // The `]` closing the items starts the envelope again.
          this.inItems = false;
          inItems = false;
          envelopeStart = index;
        }
        if (depth === 0) this.done = true;
      } else if (byte === COMMA) {
        if (this.inMetadata && depth === ITEM_METADATA_DEPTH) this.commaInMetadata(this.itemBytes + index - itemStart);
      } else if (byte > 0x20) {
        // Anything else but whitespace: part of a number, `true`, `false` or `null`.
        if (depth === 0)
          this.malformed(this.done ? 'content after the end of the list' : 'the body is not a JSON object');
        if (inItems && depth === 2) this.malformed('an item of "items" is not an object');
        this.abandonClosedOmission();
      }
    }
    this.depth = depth;
    this.inString = inString;
    if (itemStart >= 0) this.keepItemPart(chunk.subarray(itemStart));
    if (envelopeStart >= 0) this.appendEnvelope(chunk.subarray(envelopeStart));
    if (stringStart >= 0) this.topLevelStringStart?.push(chunk.subarray(stringStart));
    return items;
  }

  /**
   * The depth above which an item's bytes only need their nesting and strings followed: everything inside the item when
   * nothing is left out; with managedFields left out, the values of the item's members and of its metadata's members.
   */
  private skipAbove(): number {
    if (!this.omitManagedFields) return 2;
    return this.inMetadata ? ITEM_METADATA_DEPTH : ITEM_DEPTH;
  }

  /** A string that may be a key that matters closed at `index` (its closing quote): is it `metadata`/`managedFields`? */
  private closeKey(chunk: Buffer, itemStart: number, index: number, depth: number): void {
    const from = this.keyStart;
    this.keyStart = -1;
    const to = this.itemBytes + index - itemStart;
    if (depth === ITEM_DEPTH) this.metadataKey = this.itemTextIs(chunk, itemStart, from + 1, to, METADATA_KEY);
    else {
      this.managedFieldsKeyStart = this.itemTextIs(chunk, itemStart, from + 1, to, MANAGED_FIELDS_KEY) ? from : -1;
    }
  }

  /** Whether the current item's bytes `from`..`to` are `expected`. */
  private itemTextIs(chunk: Buffer, itemStart: number, from: number, to: number, expected: Buffer): boolean {
    if (to - from !== expected.length) return false;
    const inChunk = from - this.itemBytes + itemStart;
    // A key that began in an earlier chunk (rare) is compared from the kept parts.
    const bytes = inChunk >= 0 ? chunk : Buffer.concat([...this.item, chunk.subarray(itemStart)]);
    const at = inChunk >= 0 ? inChunk : from;
    for (let offset = 0; offset < expected.length; offset += 1) {
      if (bytes[at + offset] !== expected[offset]) return false;
    }
    return true;
  }

  /** An object or array opened inside an item; `depth` counts it already. */
  private openedInItem(byte: number, depth: number): void {
    this.abandonClosedOmission();
    if (depth === ITEM_METADATA_DEPTH && byte === OPEN_OBJECT && this.metadataKey) {
      this.inMetadata = true;
      this.metadataComma = -1;
      this.managedFieldsKeyStart = -1;
    } else if (this.inMetadata && depth === ITEM_METADATA_DEPTH + 1 && this.managedFieldsKeyStart >= 0) {
      this.omitted ??= { from: this.managedFieldsKeyStart, commaBefore: this.metadataComma, to: -1 };
    }
  }

  /** A bracket closed inside the metadata, at item offset `at`; `depth` is the one after it. */
  private closedInMetadata(at: number, depth: number): void {
    if (depth === ITEM_METADATA_DEPTH && this.omitted?.to === -1) {
      this.omitted.to = at + 1;
    } else if (depth === ITEM_DEPTH) {
      // The metadata closed: managedFields was its last member, so the comma before it goes with it.
      const omitted = this.omitted;
      if (omitted !== undefined && omitted.to >= 0) {
        this.cuts.push({ from: omitted.commaBefore >= 0 ? omitted.commaBefore : omitted.from, to: omitted.to });
      }
      this.omitted = undefined;
      this.inMetadata = false;
      this.metadataKey = false;
    }
  }

  private commaInMetadata(at: number): void {
    const omitted = this.omitted;
    if (omitted !== undefined && omitted.to >= 0) {
      // The member and the comma after it go.
      this.cuts.push({ from: omitted.from, to: at + 1 });
      this.omitted = undefined;
    }
    this.metadataComma = at;
  }

  /**
   * Something other than a comma or the metadata's end followed the managedFields value: the JSON is broken there, so
   * nothing is cut and JSON.parse reports it.
   */
  private abandonClosedOmission(): void {
    if (this.omitted !== undefined && this.omitted.to >= 0) this.omitted = undefined;
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
    const bytes = this.item.length === 0 ? last : Buffer.concat([...this.item, last]);
    const text = this.cuts.length === 0 ? bytes.toString('utf8') : textWithout(bytes, this.cuts);
    this.item = [];
    this.itemBytes = 0;
    this.cuts = [];
    this.keyStart = -1;
    this.metadataKey = false;
    this.inMetadata = false;
    this.omitted = undefined;
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

/** The text of `bytes` without the cut ranges (in order, apart; they end and start at ASCII bytes). */
function textWithout(bytes: Buffer, cuts: readonly Cut[]): string {
  let text = '';
  let at = 0;
  for (const cut of cuts) {
    text += bytes.toString('utf8', at, cut.from);
    at = cut.to;
  }
  return text + bytes.toString('utf8', at);
}
