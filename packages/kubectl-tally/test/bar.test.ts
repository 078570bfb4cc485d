import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BAR_WIDTH, utilisationBar } from '../src/view/bar.js';

describe('utilisationBar', () => {
  it('shows the used share in # and the percentage, rounded down', () => {
    expect(utilisationBar(2, 4)).toBe('[#####.....]  50%');
    expect(utilisationBar(0, 4)).toBe('[..........]   0%');
    expect(utilisationBar(4, 4)).toBe('[##########] 100%');
    expect(utilisationBar(995, 1000)).toBe('[#########.]  99%');
  });

  it('shows no share for a pool with nothing to hand out', () => {
    expect(utilisationBar(0, 0)).toBe('[..........]    -');
  });

  it('has one width, grows with use, and is full only when everything is used', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 40 }), fc.double({ min: 0, max: 1, noNaN: true }), (total, share) => {
        const used = Math.floor(total * share);
        const bar = utilisationBar(used, total);
        expect(bar).toHaveLength(BAR_WIDTH + 7);
        const filled = bar.split('#').length - 1;
        expect(filled === BAR_WIDTH).toBe(used >= total);
        if (used + 1 <= total)
          expect(utilisationBar(used + 1, total).split('#').length - 1).toBeGreaterThanOrEqual(filled);
      }),
    );
  });
});
