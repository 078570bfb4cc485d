import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  exportedSeries,
  type LabelMatcher,
  missingNames,
  queryNames,
  type SeriesSelector,
} from './dashboard-promql.js';

const PAGE = [
  '# HELP tally_ipam_pool_addresses Addresses of a pool by state.',
  '# TYPE tally_ipam_pool_addresses gauge',
  'tally_ipam_pool_addresses{kind="TallyIPPool",namespace="ns",name="vips",state="free"} 6',
  'tally_ipam_pool_addresses{kind="TallyIPPool",namespace="ns",name="vips",state="used"} 1',
  'tally_ipam_allocation_duration_seconds_bucket{le="0.1",kind="TallyIPPool"} 1',
  'tally_ipam_allocation_duration_seconds_count{kind="TallyIPPool"} 1',
  'odd_labels{message="a \\"quoted\\", value"} 1',
  '',
].join('\n');

describe('queryNames', () => {
  it('finds selectors inside functions, aggregations, ranges and binary operators, and the clause labels', () => {
    const names = queryNames(
      'histogram_quantile(0.99, sum by (le, kind) (rate(tally_ipam_allocation_duration_seconds_bucket{kind=~"$kind"}[$__rate_interval])))' +
        ' / on (kind) group_left max without (instance) (up offset 5m) > 0 and count(x{a!="b", c!~`d`})',
    );
    expect(names.selectors).toEqual([
      {
        metric: 'tally_ipam_allocation_duration_seconds_bucket',
        matchers: [{ label: 'kind', op: '=~', value: '$kind' }],
      },
      { metric: 'up', matchers: [] },
      {
        metric: 'x',
        matchers: [
          { label: 'a', op: '!=', value: 'b' },
          { label: 'c', op: '!~', value: 'd' },
        ],
      },
    ]);
    expect(names.clauseLabels).toEqual(['le', 'kind', 'kind', 'instance']);
  });

  it('reads a selector without a name, and refuses text it cannot read, naming the expression', () => {
    expect(queryNames('{__name__="up", job="x"}').selectors).toEqual([
      {
        metric: undefined,
        matchers: [
          { label: '__name__', op: '=', value: 'up' },
          { label: 'job', op: '=', value: 'x' },
        ],
      },
    ]);
    expect(() => queryNames('up{job="x"')).toThrow('PromQL "up{job=\\"x\\"": expected "," or "}"');
    expect(() => queryNames('up{job="x}')).toThrow('unterminated string');
  });

  it('gives back every selector and clause label of generated queries', () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/).filter((text) => text !== '__name__');
    const metric = fc
      .stringMatching(/^[a-z][a-z0-9_:]{0,20}$/)
      .filter(
        (text) =>
          !/^(by|without|on|ignoring|group_left|group_right|and|or|unless|bool|offset|atan2|inf|nan|sum|min|max|avg|group|stddev|stdvar|count|count_values|bottomk|topk|quantile|limitk|limit_ratio)$/.test(
            text,
          ),
      );
    const matcher: fc.Arbitrary<LabelMatcher> = fc.record({
      label,
      op: fc.constantFrom('=' as const, '!=' as const, '=~' as const, '!~' as const),
      value: fc.stringMatching(/^[a-zA-Z0-9 $.,{}()_-]{0,12}$/),
    });
    const selector: fc.Arbitrary<SeriesSelector> = fc.record({ metric, matchers: fc.array(matcher, { maxLength: 3 }) });
    const render = (s: SeriesSelector): string =>
      `${s.metric ?? ''}${s.matchers.length > 0 ? `{${s.matchers.map((m) => `${m.label}${m.op}"${m.value}"`).join(', ')}}` : ''}`;
    // Each shape names its selector `uses` times.
    const wrap = fc.constantFrom(
      { uses: 1, render: (inner: string, by: string) => `sum by (${by}) (rate(${inner}[$__rate_interval]))` },
      { uses: 1, render: (inner: string, by: string) => `max without(${by})(${inner} offset 1h) * 100` },
      { uses: 1, render: (inner: string, by: string) => `histogram_quantile(0.5, sum(${inner}) by (${by}))` },
      { uses: 2, render: (inner: string, by: string) => `(${inner} > bool 0) / ignoring(${by}) group_left ${inner}` },
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(selector, wrap, label), { minLength: 1, maxLength: 3 }), (parts) => {
        const expression = parts.map(([s, w, by]) => w.render(render(s), by)).join(' + ');
        const names = queryNames(expression);
        expect(names.selectors).toEqual(parts.flatMap(([s, w]) => Array.from({ length: w.uses }, () => s)));
        expect(names.clauseLabels).toEqual(parts.map(([, , by]) => by));
      }),
    );
  });
});

describe('exportedSeries and missingNames', () => {
  const exported = exportedSeries(PAGE);

  it('reads each sample name with its labels and values, escaped quotes included', () => {
    expect([...exported.keys()]).toEqual([
      'tally_ipam_pool_addresses',
      'tally_ipam_allocation_duration_seconds_bucket',
      'tally_ipam_allocation_duration_seconds_count',
      'odd_labels',
    ]);
    expect([...(exported.get('tally_ipam_pool_addresses')?.get('state') ?? [])]).toEqual(['free', 'used']);
    expect([...(exported.get('odd_labels')?.get('message') ?? [])]).toEqual(['a \\"quoted\\", value']);
  });

  it('passes a query whose names are all exported, and names each one that is not', () => {
    const targets = ['instance', 'job'];
    expect(
      missingNames(
        'sum by (kind, instance) (tally_ipam_pool_addresses{state="free", namespace=~"$namespace"}) / histogram_quantile(0.9, sum by (le) (rate(tally_ipam_allocation_duration_seconds_bucket[5m])))',
        exported,
        targets,
      ),
    ).toEqual([]);
    expect(
      missingNames(
        'sum by (pool) (tally_ipam_pool_addresses{state="reserved", zone="a"}) + tally_ipam_allocations_total + {job="x"}',
        exported,
        targets,
      ),
    ).toEqual([
      'metric tally_ipam_pool_addresses has no series with state="reserved" (exported: free, used)',
      'metric tally_ipam_pool_addresses has no label zone (matcher zone="a")',
      'metric tally_ipam_allocations_total is not exported',
      'a selector without a metric name: [{"label":"job","op":"=","value":"x"}]',
      'no metric of the query has label pool (by/without/on/ignoring)',
    ]);
  });
});
