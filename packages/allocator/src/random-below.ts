/**
 * A bigint in [0, bound) from a [0,1) source: draws enough 32-bit words for 64 bits more than the bound needs and
 * scales, so the bias is below 2^-64, the result grows with the draws (0 → lowest, just below 1 → highest), and
 * no source, however poor, can make it loop.
 */
export function randomBelow(bound: bigint, random: () => number): bigint {
  if (bound <= 0n) throw new RangeError(`randomBelow needs a positive bound, got ${bound}`);
  const words = Math.ceil(bound.toString(2).length / 32) + 2;
  let fraction = 0n;
  for (let word = 0; word < words; word += 1) {
    const draw = Math.floor(random() * 0x1_0000_0000);
    if (!(draw >= 0 && draw < 0x1_0000_0000)) throw new RangeError('random() must return a number in [0, 1)');
    fraction = (fraction << 32n) | BigInt(draw);
  }
  return (fraction * bound) >> BigInt(words * 32);
}
