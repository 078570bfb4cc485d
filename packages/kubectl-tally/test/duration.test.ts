import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseWindow } from '../src/view/duration.js';

describe('formatDuration', () => {
  it('prints ages as kubectl does, two units at most', () => {
    expect(
      [
        45_000,
        192_000,
        25 * 60_000,
        5 * 3600_000 + 3 * 60_000,
        17 * 3600_000,
        3 * 86_400_000 + 4 * 3600_000,
        36 * 86_400_000,
      ].map(formatDuration),
    ).toEqual(['45s', '3m12s', '25m', '5h3m', '17h', '3d4h', '36d']);
    expect(formatDuration(-5)).toBe('0s');
  });

  it('never prints more than two units, and never grows shorter in value as time passes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 45 }), (ms) => {
        expect(formatDuration(ms)).toMatch(/^\d+[smhdy](\d+[smhd])?$/);
      }),
    );
  });
});

describe('parseWindow', () => {
  it('reads one number and one unit, within a second and 366 days', () => {
    expect(parseWindow('90s')).toBe(90_000);
    expect(parseWindow('2h')).toBe(7_200_000);
    expect(parseWindow('366d')).toBe(366 * 86_400_000);
    for (const bad of ['0h', '1w', '1h30m', '', 'h', '367d', '01h', ' 1h'])
      expect(parseWindow(bad), bad).toBeUndefined();
  });
});
