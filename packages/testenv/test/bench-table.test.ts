import { describe, expect, it } from 'vitest';
import { benchDate, describeMachine, mergeBenchTable, readBenchTable, renderBenchTable } from '../src/bench-table.js';

const README = `# x

Prose before.

<!-- bench:claims:start -->
old caption

| scenario | tally | measured |
| --- | --- | --- |
| burst | 77.7 | 2026-11-26 |
| steady 50/s | 297 ms | 2026-11-25 |
<!-- bench:claims:end -->

Prose after.
`;

describe('a benchmark table between markers', () => {
  it('replaces the rows of the scenarios measured, keeps the others, appends new ones', () => {
    const text = mergeBenchTable(README, {
      name: 'claims',
      caption: 'new caption',
      header: ['scenario', 'tally', 'measured'],
      rows: [
        ['burst', '99.0', '2026-12-02'],
        ['many-pools', '80 | 90', '2026-12-02'],
      ],
    });
    expect(text.startsWith('# x\n\nProse before.\n\n<!-- bench:claims:start -->\nnew caption\n')).toBe(true);
    expect(text.endsWith('<!-- bench:claims:end -->\n\nProse after.\n')).toBe(true);
    expect(readBenchTable(text, 'claims')).toEqual({
      name: 'claims',
      caption: 'new caption',
      header: ['scenario', 'tally', 'measured'],
      rows: [
        ['burst', '99.0', '2026-12-02'],
        ['steady 50/s', '297 ms', '2026-11-25'],
        ['many-pools', '80 | 90', '2026-12-02'],
      ],
    });
  });

  it('drops the rows of a table with another header', () => {
    const text = mergeBenchTable(README, {
      name: 'claims',
      caption: 'c',
      header: ['scenario', 'p99'],
      rows: [['a', '1']],
    });
    expect(readBenchTable(text, 'claims')?.rows).toEqual([['a', '1']]);
  });

  it('refuses a README without the markers, a bad name and a row of the wrong width', () => {
    const table = { name: 'other', caption: 'c', header: ['a'], rows: [['1']] };
    expect(() => mergeBenchTable(README, table)).toThrow('no <!-- bench:other:start -->');
    expect(() => renderBenchTable({ ...table, name: 'Bad Name' })).toThrow('lower-case');
    expect(() => renderBenchTable({ ...table, rows: [['1', '2']] })).toThrow('has 2 cells, the header 1');
    expect(readBenchTable(README, 'other')).toBeUndefined();
  });

  it('names the day and the machine', () => {
    expect(benchDate(new Date('2026-12-02T23:59:00Z'))).toBe('2026-12-02');
    expect(describeMachine()).toMatch(/^\d+ cores \(.+\), \w+, Node v\d+\.\d+\.\d+, load \d+\.\d$/);
  });
});
