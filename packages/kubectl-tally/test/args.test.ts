import { describe, expect, it } from 'vitest';
import { parseInvocation } from '../src/args.js';

describe('parseInvocation', () => {
  it("takes kubectl's flags anywhere on the line", () => {
    expect(parseInvocation(['why', '-n', 'ns', 'web-0', '-o', 'json'])).toMatchObject({
      command: 'why',
      positionals: ['web-0'],
      namespace: 'ns',
      output: 'json',
    });
    expect(parseInvocation(['pools', '-A', '--window', '30m', '--chunk-size', '50'])).toMatchObject({
      allNamespaces: true,
      windowMs: 1_800_000,
      pageSize: 50,
    });
    expect(parseInvocation(['--context', 'kind', 'leaks'])).toMatchObject({
      command: 'leaks',
      context: 'kind',
      output: 'table',
    });
  });

  it('refuses, with the value cut, what it cannot run', () => {
    const refused = (argv: string[]): string => {
      try {
        parseInvocation(argv);
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
      return 'accepted';
    };
    expect(refused(['pools', '-o', 'xml'])).toBe('--output "xml" is not one of json, yaml, wide (default: a table)');
    expect(refused(['frob'])).toBe('unknown command "frob" (commands: pools, who, why, leaks)');
    expect(refused(['pools', '-n', 'a', '-A'])).toBe('--namespace and --all-namespaces exclude each other');
    expect(refused(['pools', '--window', '1w'])).toMatch(/^--window "1w" is not a duration/);
    expect(refused(['pools', '--chunk-size', '0'])).toMatch(/^--chunk-size "0" is not a whole number/);
    expect(refused(['leaks', '--min-age', '1w'])).toMatch(/^--min-age "1w" is not a duration/);
    expect(refused(['leaks', '--min-age', '00s'])).toMatch(/^--min-age "00s" is not a duration/);
    expect(refused(['why', 'x'.repeat(300)])).toMatch(/^argument 2 is 300 characters, at most 256: "x{39}…"$/);
    expect(refused(Array.from({ length: 40 }, () => 'pools'))).toBe('too many arguments: 40, at most 32');
    expect(refused(['pools', '--bogus'])).toMatch(/--bogus/);
  });
});

describe('--min-age', () => {
  it('is a minute unless given, and takes zero for every age', () => {
    expect(parseInvocation(['leaks']).minAgeMs).toBe(60_000);
    expect(parseInvocation(['leaks', '--min-age', '0s']).minAgeMs).toBe(0);
    expect(parseInvocation(['leaks', '--min-age', '2h']).minAgeMs).toBe(7_200_000);
  });
});
