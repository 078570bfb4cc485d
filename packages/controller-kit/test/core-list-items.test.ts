import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListItemSplitter, MalformedListError } from '../src/cache/list-items.js';
import { chunked } from './fixtures/chunks.js';

function split(text: string, cuts: readonly number[] = []): { items: unknown[]; envelope: unknown } {
  const splitter = new ListItemSplitter();
  const items = chunked(text, cuts)
    .flatMap((chunk) => splitter.push(chunk))
    .map((item) => JSON.parse(item) as unknown);
  return { items, envelope: JSON.parse(splitter.end()) };
}

/** Strings that stress the scanner: quotes, runs of backslashes, brackets and the word `items`. */
const trickyString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('items', '"', '\\', '\\\\', '\\"', '{[', ']}', '"items":[', 'ü€𝄞'),
);
const jsonValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    trickyString,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(trickyString, tie('value'), { maxKeys: 4 }),
  ),
})).value;
const item = fc.dictionary(trickyString, jsonValue, { maxKeys: 5 });

describe('ListItemSplitter', () => {
  it('yields every item and the envelope without them, however the body is laid out and cut', () => {
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 6 }),
        fc.dictionary(
          trickyString.filter((key) => key !== 'items' && key !== '__proto__'),
          jsonValue,
          { maxKeys: 4 },
        ),
        fc.nat(),
        fc.constantFrom(undefined, 1, 2),
        fc.array(fc.nat(), { maxLength: 40 }),
        (items, envelope, itemsAt, indent, cuts) => {
          // `items` at any position among the envelope's keys.
          const entries = Object.entries(envelope);
          entries.splice(itemsAt % (entries.length + 1), 0, ['items', items]);
          const body = JSON.stringify(Object.fromEntries(entries), null, indent);
          const result = split(body, cuts);
          expect(result.items).toEqual(items);
          expect(result.envelope).toEqual({ ...envelope, items: [] });
        },
      ),
    );
  });

  it('cuts a list the way kube-apiserver writes it, item by item as the bytes arrive', () => {
    const body =
      '{"apiVersion":"v1","items":[{"metadata":{"name":"a","annotations":{"note":"a \\"quoted\\" ] }"}}},' +
      '{"metadata":{"name":"b"},"spec":{"items":[1,2]}}],"kind":"PartList","metadata":{"resourceVersion":"42"}}';
    const splitter = new ListItemSplitter();
    const bytes = Buffer.from(body);
    const cut = body.indexOf('},{') + 1;
    expect(splitter.push(bytes.subarray(0, cut))).toHaveLength(1);
    expect(splitter.push(bytes.subarray(cut))).toHaveLength(1);
    expect(JSON.parse(splitter.end())).toEqual({
      apiVersion: 'v1',
      items: [],
      kind: 'PartList',
      metadata: { resourceVersion: '42' },
    });
  });

  it('names what is wrong with a body that is not a list of objects', () => {
    const failure = (body: string): string => {
      try {
        const splitter = new ListItemSplitter();
        splitter.push(Buffer.from(body));
        splitter.end();
      } catch (error) {
        expect(error).toBeInstanceOf(MalformedListError);
        return (error as Error).message;
      }
      throw new Error(`no error for ${body}`);
    };
    expect(failure('[{"a":1}]')).toContain('not a JSON object');
    expect(failure('"items"')).toContain('not a JSON object');
    expect(failure('{"items":[{"a":1},2]}')).toContain('item of "items" is not an object');
    expect(failure('{"items":["a"]}')).toContain('item of "items" is not an object');
    expect(failure('{"items":[{"a":1}]')).toContain('ended before the list did');
    expect(failure('{"items":[{"a":"1}]}')).toContain('ended before the list did');
    expect(failure('{"kind":"List"}')).toContain('no "items" array');
    expect(failure('{"items":[]}{')).toContain('after the end of the list');
    expect(failure('{"items":[]}]')).toContain('unbalanced');
  });

  it('refuses an item or an envelope past its bound, within one chunk or across many', () => {
    const small = new ListItemSplitter(16, 64);
    // 16 bytes exactly, then 17.
    expect(small.push(Buffer.from('{"items":[{"a":"12345678"},'))).toHaveLength(1);
    expect(() => small.push(Buffer.from('{"a":"123456789"}'))).toThrow(/more than 16 bytes/);

    const across = new ListItemSplitter(16, 64);
    across.push(Buffer.from('{"items":[{"a":"123'));
    across.push(Buffer.from('4567890'));
    expect(() => across.push(Buffer.from('1234567890'))).toThrow(/more than 16 bytes/);

    const envelope = new ListItemSplitter(16, 64);
    expect(() => envelope.push(Buffer.from(`{"kind":"${'x'.repeat(64)}","items":[]}`))).toThrow(
      /envelope of more than 64/,
    );
  });
});
