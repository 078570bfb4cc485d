/**
 * Bounds on text that Tally echoes back to people (condition and Event messages, admission denials, parse errors):
 * a value taken from an object can be megabytes long, and a message that exceeds the API's limit is refused with the
 * whole write, so every echoed value is cut first.
 */

/** The ellipsis that marks a cut value. */
export const ELLIPSIS = '…';

/** The longest value a message echoes in full (an IPv6 range is 91 characters). */
export const MAX_ECHOED_VALUE_LENGTH = 100;

/**
 * `text` cut to at most `max` characters, the cut marked with an ellipsis (counted in `max`). Never splits a
 * surrogate pair, so the result is valid UTF-16 and encodes to valid UTF-8.
 */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= ELLIPSIS.length) return ELLIPSIS.slice(0, Math.max(0, max));
  let end = max - ELLIPSIS.length;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}${ELLIPSIS}`;
}

/**
 * The length of `text` as the API server counts it for an OpenAPI `maxLength` and CEL's `size()`: in Unicode code
 * points, so an astral character (an emoji) counts one where `text.length` counts its two UTF-16 code units. An
 * unpaired surrogate counts one, like the U+FFFD the API server decodes it to. zod 4's string `.max()` counts the same
 * way, so a guard written with this agrees with both.
 */
export function codePointLength(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length - 1; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit < 0xd800 || unit > 0xdbff) continue;
    const next = text.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) {
      count -= 1;
      index += 1;
    }
  }
  return count;
}

/** A value from an object as a message shows it: in full when short, else cut (`MAX_ECHOED_VALUE_LENGTH`). */
export function echo(value: string): string {
  return clipText(value, MAX_ECHOED_VALUE_LENGTH);
}

/** True for an integer in `[min, max]`: the check every number read from an object passes before it is used. */
export function isIntegerInRange(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/**
 * `text` cut to at most `maxBytes` bytes of UTF-8, the cut marked with an ellipsis (counted in the bytes): for limits
 * the API counts in bytes, such as an Event's note (1 KiB).
 */
export function clipUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  // A character is at most 3 bytes per UTF-16 code unit: start there and shrink until the text fits.
  let max = Math.min(text.length, Math.max(1, Math.floor(maxBytes / 3)));
  let clipped = clipText(text, max);
  for (let step = Math.max(1, Math.ceil(max / 8)); max < text.length; ) {
    const longer = clipText(text, Math.min(text.length - 1, max + step));
    if (Buffer.byteLength(longer, 'utf8') > maxBytes) {
      if (step === 1) break;
      step = Math.ceil(step / 2);
      continue;
    }
    clipped = longer;
    max += step;
  }
  return clipped;
}

/**
 * JSON text of `value` for a message, at most `max` characters (cut with an ellipsis): built piece by piece and
 * stopped once long enough, so a value of megabytes or nested a hundred thousand levels deep costs no more than a
 * short one (`JSON.stringify` would walk all of it, and overflow the stack on deep nesting).
 */
export function describeJSON(value: unknown, max: number): string {
  let out = '';
  const full = (): boolean => out.length > max;
  const write = (node: unknown, depth: number): void => {
    if (full()) return;
    if (node === undefined) {
      out += 'undefined';
    } else if (node === null || typeof node === 'boolean' || typeof node === 'number') {
      out += Number.isFinite(node) || typeof node !== 'number' ? JSON.stringify(node) : String(node);
    } else if (typeof node === 'string') {
      out += JSON.stringify(node.length > max ? node.slice(0, max + 1) : node);
    } else if (typeof node === 'bigint') {
      out += node.toString();
    } else if (Array.isArray(node)) {
      if (depth >= 32) {
        out += '[…]';
        return;
      }
      out += '[';
      for (let index = 0; index < node.length && !full(); index += 1) {
        if (index > 0) out += ',';
        write(node[index], depth + 1);
      }
      out += ']';
    } else if (typeof node === 'object') {
      if (depth >= 32) {
        out += '{…}';
        return;
      }
      out += '{';
      let first = true;
      for (const key in node) {
        if (full()) break;
        if (!Object.hasOwn(node, key)) continue;
        if (!first) out += ',';
        first = false;
        out += `${JSON.stringify(key.length > max ? key.slice(0, max + 1) : key)}:`;
        write((node as Record<string, unknown>)[key], depth + 1);
      }
      out += '}';
    } else {
      out += `<${typeof node}>`;
    }
  };
  write(value, 0);
  return clipText(out, max);
}
