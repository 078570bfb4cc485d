/** mulberry32: a small seeded generator, so a failing chaos run can be replayed with the seed it printed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Kept as a re-export so this file's importers (chaos test, bench) need no change. */
export { forEachLimited } from '@tally-ipam/testenv';
