import { describe, expect, it } from 'vitest';
import { findVariables, substituteVariables } from '../src/variables.js';

describe('clusterctl variables', () => {
  it('finds names and defaults of every supported form', () => {
    expect(findVariables(`\${A_1} \${B:=x} \${C=y} \${D:-}`)).toEqual([
      { text: `\${A_1}`, name: 'A_1', defaultValue: undefined },
      { text: `\${B:=x}`, name: 'B', defaultValue: 'x' },
      { text: `\${C=y}`, name: 'C', defaultValue: 'y' },
      { text: `\${D:-}`, name: 'D', defaultValue: '' },
    ]);
  });

  it('rejects malformed variables and variables without a value, naming them', () => {
    expect(() => findVariables(`image: \${tally_image}`)).toThrow(/\$\{tally_image\} is not well formed/);
    expect(() => findVariables(`x: \${A$B}`)).toThrow(/not well formed/);
    expect(() => substituteVariables(`a: \${TALLY_A}\nb: \${TALLY_B:=x}`)).toThrow(
      /without a value or default: TALLY_A$/,
    );
    expect(substituteVariables(`a: \${TALLY_A}\nb: \${TALLY_B:=x}\nc: \${TALLY_C:-}`, { TALLY_A: '1' })).toBe(
      'a: 1\nb: x\nc: ',
    );
  });
});
