import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exhaustionEtaMs, formatEta } from '../src/view/eta.js';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-12-04T12:00:00Z');

describe('exhaustionEtaMs', () => {
  it('extrapolates the allocations of the window: 2 in an hour, 4 free, 2 hours left', () => {
    expect(
      exhaustionEtaMs({ free: 4, createdMs: [NOW - 10 * 60_000, NOW - 50 * 60_000], nowMs: NOW, windowMs: HOUR }),
    ).toBe(2 * HOUR);
  });

  it('has no ETA without a recent allocation, and 0 with nothing free', () => {
    expect(exhaustionEtaMs({ free: 4, createdMs: [NOW - 2 * HOUR], nowMs: NOW, windowMs: HOUR })).toBeUndefined();
    expect(exhaustionEtaMs({ free: 0, createdMs: [], nowMs: NOW, windowMs: HOUR })).toBe(0);
    expect(formatEta(undefined)).toBe('—');
    expect(formatEta(0)).toBe('exhausted');
    expect(formatEta(2 * HOUR + 30 * 60_000)).toBe('~2h30m');
  });

  it('is free divided by the rate, and shrinks as more allocations fall in the window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(fc.integer({ min: 0, max: 2 * HOUR }), { maxLength: 50 }),
        fc.integer({ min: 1000, max: 24 * HOUR }),
        (free, ages, windowMs) => {
          const createdMs = ages.map((age) => NOW - age);
          const recent = ages.filter((age) => age < windowMs).length;
          const eta = exhaustionEtaMs({ free, createdMs, nowMs: NOW, windowMs });
          if (recent === 0) {
            expect(eta).toBeUndefined();
            return;
          }
          expect(eta).toBeCloseTo((free * windowMs) / recent, 3);
          const more = exhaustionEtaMs({ free, createdMs: [...createdMs, NOW], nowMs: NOW, windowMs });
          expect(more).toBeLessThan(eta ?? 0);
        },
      ),
    );
  });
});
