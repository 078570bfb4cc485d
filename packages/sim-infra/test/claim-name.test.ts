import { DNS1123_SUBDOMAIN_PATTERN } from '@tally-ipam/api-types';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEVICE_NAME_PATTERN } from '../src/api/v1alpha1/types.js';
import { controlPlaneEndpointClaimName, ipAddressClaimName, shortenName } from '../src/index.js';
import { MAX_OBJECT_NAME_LENGTH } from '../src/util/claim-name.js';

const subdomain = new RegExp(DNS1123_SUBDOMAIN_PATTERN);

/** DNS-1123 labels joined by '.', up to the API server's limit: every name a SimMachine can have. */
const label = fc
  .tuple(fc.stringMatching(/^[a-z0-9]$/), fc.stringMatching(/^[-a-z0-9]{0,40}$/), fc.stringMatching(/^[a-z0-9]$/))
  .map(([first, middle, last]) => `${first}${middle}${last}`);
const objectName = fc
  .array(label, { minLength: 1, maxLength: 8 })
  .map((labels) => labels.join('.'))
  .filter((name) => name.length <= MAX_OBJECT_NAME_LENGTH);
const device = fc.option(fc.stringMatching(new RegExp(DEVICE_NAME_PATTERN)), { nil: undefined });
const index = fc.nat({ max: 127 });

describe('ipAddressClaimName', () => {
  it('is <machine>-<device name or index>-<pool index> while it fits', () => {
    expect(ipAddressClaimName('worker-0', { name: 'eth0' }, 0, 1)).toBe('worker-0-eth0-1');
    expect(ipAddressClaimName('worker-0', {}, 2, 0)).toBe('worker-0-2-0');
    expect(controlPlaneEndpointClaimName('prod')).toBe('prod-control-plane-endpoint');
  });

  it('is always a valid object name of at most 253 characters', () => {
    fc.assert(
      fc.property(objectName, device, index, index, (machine, name, deviceIndex, poolIndex) => {
        const claim = ipAddressClaimName(machine, { name }, deviceIndex, poolIndex);
        expect(claim.length).toBeLessThanOrEqual(MAX_OBJECT_NAME_LENGTH);
        expect(claim).toMatch(subdomain);
      }),
    );
  });

  it('is deterministic and tells different (machine, device, pool) triples apart', () => {
    fc.assert(
      fc.property(
        fc.tuple(objectName, device, index, index),
        fc.tuple(objectName, device, index, index),
        ([machineA, nameA, deviceA, poolA], [machineB, nameB, deviceB, poolB]) => {
          const a = ipAddressClaimName(machineA, { name: nameA }, deviceA, poolA);
          const b = ipAddressClaimName(machineB, { name: nameB }, deviceB, poolB);
          expect(ipAddressClaimName(machineA, { name: nameA }, deviceA, poolA)).toBe(a);
          const sameDevice = (nameA ?? String(deviceA)) === (nameB ?? String(deviceB));
          const sameTriple = machineA === machineB && sameDevice && poolA === poolB;
          expect(a === b).toBe(sameTriple);
        },
      ),
    );
  });

  it('tells apart machines whose names only differ where a short name would be cut', () => {
    const base = 'm'.repeat(250);
    const a = ipAddressClaimName(`${base}a`, { name: 'eth0' }, 0, 0);
    const b = ipAddressClaimName(`${base}b`, { name: 'eth0' }, 0, 0);
    expect(a).not.toBe(b);
    expect(a.length).toBe(MAX_OBJECT_NAME_LENGTH);
    expect(a).toMatch(/^m+-[0-9a-f]{10}$/);
  });
});

describe('shortenName', () => {
  it('leaves names that fit alone and never ends the kept prefix with - or .', () => {
    expect(shortenName('short')).toBe('short');
    const cut = shortenName(`${'a'.repeat(241)}.-bbbbbbbbbbbbbbb`);
    expect(cut).toMatch(subdomain);
    expect(cut.length).toBeLessThanOrEqual(MAX_OBJECT_NAME_LENGTH);
  });
});
