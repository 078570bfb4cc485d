import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  autoscaleFromZeroStatus,
  canScaleFromZero,
  formatBytes,
  formatMillicores,
  InstanceSizeError,
  NodeCapacity,
  QUANTITY_PATTERN,
} from '../src/index.js';

const BINARY_MULTIPLIERS: Readonly<Record<string, bigint>> = {
  '': 1n,
  Ki: 1024n,
  Mi: 1024n ** 2n,
  Gi: 1024n ** 3n,
  Ti: 1024n ** 4n,
  Pi: 1024n ** 5n,
  Ei: 1024n ** 6n,
};

/** Reads back what formatBytes writes: an integer with an optional binary suffix. */
function bytesOf(quantity: string): bigint {
  const match = /^(\d+)(Ki|Mi|Gi|Ti|Pi|Ei)?$/.exec(quantity);
  if (!match?.[1]) throw new Error(`not a binary quantity: ${quantity}`);
  return BigInt(match[1]) * (BINARY_MULTIPLIERS[match[2] ?? ''] ?? 0n);
}

function millicoresOf(quantity: string): number {
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) : Number(quantity) * 1000;
}

describe('autoscaleFromZeroStatus', () => {
  it('announces cpu, memory and storage as canonical quantity strings, with the node info', () => {
    expect(
      autoscaleFromZeroStatus({
        size: { cpuMillicores: 4000, memoryBytes: 8 * 1024 ** 3, ephemeralStorageBytes: 100 * 1024 ** 3 },
        architecture: 'arm64',
        operatingSystem: 'linux',
      }),
    ).toEqual({
      capacity: { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi' },
      nodeInfo: { architecture: 'arm64', operatingSystem: 'linux' },
    });
    expect(
      autoscaleFromZeroStatus({
        size: { cpuMillicores: 1500, memoryBytes: 1536 * 1024 ** 2, extended: { 'nvidia.com/gpu': '2' } },
        architecture: 'amd64',
        operatingSystem: 'linux',
      }).capacity,
    ).toEqual({ 'nvidia.com/gpu': '2', cpu: '1500m', memory: '1536Mi' });
  });

  it('the announced size can always scale from zero and passes the CRD schema (strings only)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_024_000 }),
        fc.integer({ min: 1, max: 2 ** 50 }),
        (cpuMillicores, memoryBytes) => {
          const status = autoscaleFromZeroStatus({
            size: { cpuMillicores, memoryBytes },
            architecture: 'amd64',
            operatingSystem: 'linux',
          });
          expect(canScaleFromZero(status)).toBe(true);
          expect(NodeCapacity.safeParse(status.capacity).success).toBe(true);
          for (const value of Object.values(status.capacity)) expect(typeof value).toBe('string');
        },
      ),
    );
  });

  it('refuses a size the autoscaler could not use, naming the field and the value', () => {
    const base = { architecture: 'amd64', operatingSystem: 'linux' } as const;
    expect(() => autoscaleFromZeroStatus({ ...base, size: { cpuMillicores: 0, memoryBytes: 1024 } })).toThrow(
      new InstanceSizeError('size.cpuMillicores must be a positive whole number, got 0'),
    );
    expect(() => autoscaleFromZeroStatus({ ...base, size: { cpuMillicores: 1000, memoryBytes: 1.5 } })).toThrow(
      /size\.memoryBytes must be a positive whole number, got 1\.5/,
    );
    expect(() =>
      autoscaleFromZeroStatus({ ...base, size: { cpuMillicores: 1000, memoryBytes: 1024, extended: { gpu: 'two' } } }),
    ).toThrow(/size\.extended\["gpu"\] "two" cannot be announced/);
    expect(() =>
      autoscaleFromZeroStatus({
        ...base,
        architecture: 'riscv64' as 'amd64',
        size: { cpuMillicores: 1, memoryBytes: 1 },
      }),
    ).toThrow(/architecture "riscv64" cannot be announced/);
  });
});

describe('canScaleFromZero', () => {
  it('needs both cpu and memory, as cluster-autoscaler does', () => {
    expect(canScaleFromZero({ capacity: { cpu: '2', memory: '4Gi' } })).toBe(true);
    expect(canScaleFromZero({ capacity: { cpu: '2' } })).toBe(false);
    expect(canScaleFromZero({ capacity: { memory: '4Gi' } })).toBe(false);
    expect(canScaleFromZero({})).toBe(false);
  });
});

describe('quantity formatting', () => {
  it('formatBytes: canonical (largest exact binary suffix), a valid quantity, and the same number of bytes', () => {
    expect(formatBytes(1)).toBe('1');
    expect(formatBytes(1023)).toBe('1023');
    expect(formatBytes(1024)).toBe('1Ki');
    expect(formatBytes(1536 * 1024)).toBe('1536Ki');
    expect(formatBytes(4 * 1024 ** 3)).toBe('4Gi');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (bytes) => {
        const quantity = formatBytes(bytes);
        expect(quantity).toMatch(new RegExp(QUANTITY_PATTERN));
        expect(bytesOf(quantity)).toBe(BigInt(bytes));
        // Canonical: no larger suffix would fit, so the number in front is no multiple of 1024 (Ei is the last).
        const number = BigInt(/^\d+/.exec(quantity)?.[0] ?? '0');
        if (!quantity.endsWith('Ei')) expect(number % 1024n).not.toBe(0n);
      }),
    );
  });

  it('formatMillicores: whole cores plain, the rest in m, a valid quantity of the same amount', () => {
    expect(formatMillicores(2000)).toBe('2');
    expect(formatMillicores(250)).toBe('250m');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (millicores) => {
        const quantity = formatMillicores(millicores);
        expect(quantity).toMatch(new RegExp(QUANTITY_PATTERN));
        expect(millicoresOf(quantity)).toBe(millicores);
      }),
    );
  });
});
