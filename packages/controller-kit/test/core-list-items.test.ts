import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListItemSplitter, type ListItemSplitterOptions, MalformedListError } from '../src/cache/list-items.js';
import { chunked } from './fixtures/chunks.js';

function split(
  text: string,
  cuts: readonly number[] = [],
  options: ListItemSplitterOptions = {},
): { items: unknown[]; envelope: unknown } {
  const splitter = new ListItemSplitter(options);
  const items = chunked(text, cuts)
    .flatMap((chunk) => splitter.push(chunk))
    .map((item) => JSON.parse(item) as unknown);
  return { items, envelope: JSON.parse(splitter.end()) };
}

/** Strings that stress the scanner: quotes, runs of backslashes, brackets and the word `items`. */
const trickyString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('items', 'metadata', 'managedFields', '"', '\\', '\\\\', '\\"', '{[', ']}', '"items":[', 'ü€𝄞'),
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

  it("leaves out each item's metadata.managedFields when asked, and nothing else, however the body is cut", () => {
    const key = trickyString.filter((name) => name !== '__proto__');
    /** `[key, value]` pairs with one more inserted at a random place (or none, when `extra` is undefined). */
    const withMember = (
      entries: fc.Arbitrary<[string, unknown][]>,
      extra: fc.Arbitrary<[string, unknown] | undefined>,
    ): fc.Arbitrary<[string, unknown][]> =>
      fc.tuple(entries, extra, fc.nat()).map(([members, member, at]) => {
        const all = [...members];
        if (member) all.splice(at % (all.length + 1), 0, member);
        return all;
      });
    const members = (exclude: string): fc.Arbitrary<[string, unknown][]> =>
      fc.uniqueArray(
        fc.tuple(
          key.filter((name) => name !== exclude),
          jsonValue,
        ),
        {
          maxLength: 4,
          selector: ([name]) => name,
        },
      );
    const managedFields = fc.oneof(
      fc.array(jsonValue, { maxLength: 3 }),
      fc.dictionary(key, jsonValue, { maxKeys: 2 }),
    );
    const metadata = withMember(
      members('managedFields'),
      fc.option(
        managedFields.map((value): [string, unknown] => ['managedFields', value]),
        { nil: undefined },
      ),
    );
    const listItem = withMember(
      members('metadata'),
      fc.option(
        metadata.map((entries): [string, unknown] => ['metadata', Object.fromEntries(entries)]),
        {
          nil: undefined,
        },
      ),
    ).map((entries) => Object.fromEntries(entries) as Record<string, unknown>);
    fc.assert(
      fc.property(
        fc.array(listItem, { maxLength: 5 }),
        fc.constantFrom(undefined, 1, 2),
        fc.array(fc.nat(), { maxLength: 40 }),
        (items, indent, cuts) => {
          const envelope = { kind: 'PartList', metadata: { resourceVersion: '7', managedFields: [] } };
          const body = JSON.stringify({ ...envelope, items }, null, indent);
          const result = split(body, cuts, { omitManagedFields: true });
          const expected = items.map((listed) => {
            const meta = listed.metadata;
            if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return listed;
            const { managedFields: _dropped, ...kept } = meta as Record<string, unknown>;
            return { ...listed, metadata: kept };
          });
          expect(result.items).toEqual(expected);
          expect(result.envelope).toEqual({ ...envelope, items: [] });
        },
      ),
    );
  });

  it('keeps managedFields it cannot be sure of, and leaves broken JSON broken', () => {
    const itemsOf = (body: string): unknown[] =>
      new ListItemSplitter({ omitManagedFields: true })
        .push(Buffer.from(body))
        .map((text) => JSON.parse(text) as unknown);
    // As a value, as an item's own key, deeper than the metadata, spelled with an escape: all kept.
    const kept = [
      { metadata: { name: 'managedFields', labels: { managedFields: 'x' } }, spec: { managedFields: [1] } },
      { managedFields: [2], metadata: { name: 'b' } },
    ];
    expect(itemsOf(JSON.stringify({ items: kept }))).toEqual(kept);
    expect(itemsOf('{"items":[{"metadata":{"managed\\u0046ields":[3]}}]}')).toEqual([
      { metadata: { managedFields: [3] } },
    ]);
    // A missing comma after the value is not hidden by the cut.
    const broken = new ListItemSplitter({ omitManagedFields: true }).push(
      Buffer.from('{"items":[{"metadata":{"managedFields":[] 5,"name":"a"}}]}'),
    );
    expect(() => broken.map((text) => JSON.parse(text) as unknown)).toThrow(SyntaxError);
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
    const small = new ListItemSplitter({ maxItemBytes: 16, maxEnvelopeBytes: 64 });
    // 16 bytes exactly, then 17.
    expect(small.push(Buffer.from('{"items":[{"a":"12345678"},'))).toHaveLength(1);
    expect(() => small.push(Buffer.from('{"a":"123456789"}'))).toThrow(/more than 16 bytes/);

    const across = new ListItemSplitter({ maxItemBytes: 16, maxEnvelopeBytes: 64 });
    across.push(Buffer.from('{"items":[{"a":"123'));
    across.push(Buffer.from('4567890'));
    expect(() => across.push(Buffer.from('1234567890'))).toThrow(/more than 16 bytes/);

    const envelope = new ListItemSplitter({ maxItemBytes: 16, maxEnvelopeBytes: 64 });
    expect(() => envelope.push(Buffer.from(`{"kind":"${'x'.repeat(64)}","items":[]}`))).toThrow(
      /envelope of more than 64/,
    );
  });
});
