import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ClaimedAddress, validateClaimedAddresses } from '../src/index.js';

function claimed(overrides: Partial<ClaimedAddress> & Pick<ClaimedAddress, 'claimName' | 'address'>): ClaimedAddress {
  return { device: 'eth0', deviceIndex: 0, prefix: 24, ...overrides };
}

describe('validateClaimedAddresses', () => {
  it('groups valid IPv4 and IPv6 addresses per device with their gateways', () => {
    const result = validateClaimedAddresses([
      claimed({ claimName: 'm-eth0-0', address: '10.0.0.5', gateway: '10.0.0.1' }),
      claimed({ claimName: 'm-eth0-1', address: 'fd00::5', prefix: 64, gateway: 'fd00::1' }),
      claimed({ claimName: 'm-1-0', device: '1', deviceIndex: 1, address: '192.168.1.9', prefix: 32 }),
    ]);
    expect(result).toEqual({
      valid: true,
      devices: [
        { name: 'eth0', ipAddrs: ['10.0.0.5/24', 'fd00::5/64'], gateway4: '10.0.0.1', gateway6: 'fd00::1' },
        { name: '1', ipAddrs: ['192.168.1.9/32'] },
      ],
    });
  });

  it('names the claim and the value of every problem', () => {
    const result = validateClaimedAddresses([
      claimed({ claimName: 'bad-address', address: '10.0.0.300' }),
      claimed({ claimName: 'bad-prefix', address: '10.0.0.6', prefix: 33 }),
      claimed({ claimName: 'bad-gateway', address: '10.0.0.7', gateway: 'gw' }),
      claimed({ claimName: 'wrong-family', address: '10.0.0.8', gateway: 'fd00::1' }),
    ]);
    expect(result.valid).toBe(false);
    if (result.valid) return;
    expect(result.problems).toEqual([
      expect.stringMatching(
        /^IPAddressClaim bad-address \(device eth0\): address "10\.0\.0\.300" is not a valid IP address/,
      ),
      'IPAddressClaim bad-prefix (device eth0): prefix 33 of address 10.0.0.6 is not between 0 and 32 (IPv4)',
      expect.stringMatching(/^IPAddressClaim bad-gateway \(device eth0\): gateway "gw" is not a valid IP address/),
      'IPAddressClaim wrong-family (device eth0): gateway fd00::1 is IPv6 but address 10.0.0.8 is IPv4',
    ]);
  });

  it('refuses one address handed out twice, across devices and in any IPv6 spelling', () => {
    const result = validateClaimedAddresses([
      claimed({ claimName: 'a', address: 'fd00::5', prefix: 64 }),
      claimed({ claimName: 'b', device: 'eth1', deviceIndex: 1, address: 'fd00:0:0::5', prefix: 64 }),
    ]);
    expect(result).toEqual({
      valid: false,
      problems: [
        'address fd00:0:0::5 is handed out twice: IPAddressClaim a (device eth0) and IPAddressClaim b (device eth1)',
      ],
    });
  });

  it('refuses two different gateways of one family on one device, but not on two devices', () => {
    const oneDevice = validateClaimedAddresses([
      claimed({ claimName: 'a', address: '10.0.0.5', gateway: '10.0.0.1' }),
      claimed({ claimName: 'b', address: '10.0.1.5', gateway: '10.0.1.1' }),
    ]);
    expect(oneDevice).toEqual({
      valid: false,
      problems: [
        'device eth0 gets two IPv4 gateways: 10.0.0.1 from IPAddressClaim a and 10.0.1.1 from IPAddressClaim b',
      ],
    });
    const twoDevices = validateClaimedAddresses([
      claimed({ claimName: 'a', address: '10.0.0.5', gateway: '10.0.0.1' }),
      claimed({ claimName: 'b', device: 'eth1', deviceIndex: 1, address: '10.0.1.5', gateway: '10.0.1.1' }),
    ]);
    expect(twoDevices.valid).toBe(true);
  });

  it('accepts any set of distinct IPv4 addresses with in-range prefixes and no gateways', () => {
    const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((octets) => octets.join('.'));
    fc.assert(
      fc.property(fc.uniqueArray(ipv4, { maxLength: 10 }), fc.nat(32), (addresses, prefix) => {
        const result = validateClaimedAddresses(
          addresses.map((address, index) => claimed({ claimName: `c${index}`, address, prefix })),
        );
        expect(result.valid).toBe(true);
        if (result.valid) expect(result.devices.flatMap((device) => device.ipAddrs)).toHaveLength(addresses.length);
      }),
    );
  });

  it('reports a duplicate whenever an address repeats', () => {
    const ipv4 = fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `10.0.${a}.${b}`);
    fc.assert(
      fc.property(fc.array(ipv4, { minLength: 1, maxLength: 10 }), fc.nat(), (addresses, pick) => {
        const repeated = addresses[pick % addresses.length] ?? '10.0.0.1';
        const all = [...addresses, repeated];
        const result = validateClaimedAddresses(
          all.map((address, index) => claimed({ claimName: `c${index}`, address })),
        );
        expect(result.valid).toBe(false);
        if (!result.valid) expect(result.problems.some((problem) => problem.includes('handed out twice'))).toBe(true);
      }),
    );
  });
});
