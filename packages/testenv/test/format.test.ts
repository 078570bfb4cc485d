import { describe, expect, it } from 'vitest';
import { formatDuration } from '../src/format.js';

describe('formatDuration', () => {
  it.each([
    [0, '0.0 s'],
    [12_340, '12.3 s'],
    [59_940, '59.9 s'],
    // Tenths that round up to a minute are a minute, not "60.0 s".
    [59_960, '1 min 0 s'],
    [61_000, '1 min 1 s'],
    // A progress line at 119.6 s once read "1 min 60 s".
    [119_600, '2 min 0 s'],
    [3_599_500, '60 min 0 s'],
  ])('%d ms is "%s"', (milliseconds, text) => {
    expect(formatDuration(milliseconds)).toBe(text);
  });

  it('never prints 60 s or more beside the minutes, nor 60.0 s alone', () => {
    for (let milliseconds = 0; milliseconds <= 3 * 60_000; milliseconds += 50) {
      const text = formatDuration(milliseconds);
      const rest = /^(\d+) min (\d+) s$/.exec(text);
      if (rest) expect(Number(rest[2]), text).toBeLessThan(60);
      else expect(Number.parseFloat(text), text).toBeLessThan(60);
    }
  });
});
