import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderTable } from '../src/view/table.js';

describe('renderTable', () => {
  it('lays a table out as kubectl does: upper-case headers, padded columns, three spaces, no trailing space', () => {
    expect(
      renderTable(
        ['name', 'used'],
        [
          ['roomy', '2'],
          ['a', '10'],
        ],
      ),
    ).toEqual(['NAME    USED', 'roomy   2', 'a       10']);
  });

  it('makes a newline or tab in a cell a space, so that a row stays one line', () => {
    expect(renderTable(['message'], [['a\nb\tc']])).toEqual(['MESSAGE', 'a b c']);
  });

  it('starts every column at the same offset on every line, and no line ends in a space', () => {
    const cell = fc.string({ maxLength: 12 }).map((text) => text.replace(/\s/g, 'x'));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }).chain((columns) =>
          fc.tuple(
            fc.array(fc.stringMatching(/^[a-z]{1,8}$/), { minLength: columns, maxLength: columns }),
            fc.array(
              fc.array(
                cell.map((text) => text || 'x'),
                { minLength: columns, maxLength: columns },
              ),
              { maxLength: 8 },
            ),
          ),
        ),
        ([headers, rows]) => {
          const lines = renderTable(headers, rows);
          expect(lines).toHaveLength(rows.length + 1);
          for (const line of lines) expect(line).toBe(line.trimEnd());
          // Each column starts where the header's does.
          const starts: number[] = [];
          let offset = 0;
          headers.forEach((header, index) => {
            starts.push(offset);
            const width = Math.max(header.length, ...rows.map((row) => [...(row[index] ?? '')].length));
            offset += width + 3;
          });
          rows.forEach((row, r) => {
            const chars = [...(lines[r + 1] ?? '')];
            for (const [c, value] of row.entries()) {
              expect(chars.slice(starts[c], (starts[c] ?? 0) + [...value].length).join('')).toBe(value);
            }
          });
        },
      ),
    );
  });
});
