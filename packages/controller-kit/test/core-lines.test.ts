import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter, LineTooLongError } from '../src/cache/lines.js';
import { chunked } from './fixtures/chunks.js';

describe('LineSplitter', () => {
  it('yields every line whole, however the bytes are cut (inside multi-byte characters too)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'grapheme', maxLength: 40 }).map((line) => line.replaceAll('\n', ' ')),
          {
            maxLength: 20,
          },
        ),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 30 }),
        (lines, lastHasNewline, cuts) => {
          const text = lines.join('\n') + (lastHasNewline && lines.length > 0 ? '\n' : '');
          const splitter = new LineSplitter();
          const seen = chunked(text, cuts).flatMap((chunk) => splitter.push(chunk));
          const rest = splitter.rest();
          const complete = lastHasNewline ? lines : lines.slice(0, -1);
          expect(seen).toEqual(complete);
          expect(rest).toBe(lastHasNewline ? '' : (lines.at(-1) ?? ''));
        },
      ),
    );
  });

  it('refuses a line past its bound, within one chunk or across many, and allows one exactly at it', () => {
    const atBound = new LineSplitter(8);
    expect(atBound.push(Buffer.from('12345678\nab'))).toEqual(['12345678']);
    expect(atBound.push(Buffer.from('cdefgh\n'))).toEqual(['abcdefgh']);

    expect(() => new LineSplitter(8).push(Buffer.from('123456789\n'))).toThrow(LineTooLongError);
    const across = new LineSplitter(8);
    expect(across.push(Buffer.from('12345'))).toEqual([]);
    expect(() => across.push(Buffer.from('6789'))).toThrow('a line of more than 8 bytes without a newline');
    const ended = new LineSplitter(8);
    ended.push(Buffer.from('1234'));
    expect(() => ended.push(Buffer.from('56789\n'))).toThrow(LineTooLongError);
  });
});
