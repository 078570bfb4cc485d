import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { overlapsTarget, parseTarget, type Target } from '../src/view/target.js';

function target(text: string): Target {
  const parsed = parseTarget(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.target;
}

const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((bytes) => bytes.join('.'));

function toInt(address: string): number {
  return address.split('.').reduce((value, byte) => value * 256 + Number(byte), 0);
}

describe('parseTarget', () => {
  it('reads addresses and CIDRs of both families, host bits of a CIDR cleared', () => {
    expect(target('10.0.0.5').text).toBe('10.0.0.5/32');
    expect(target('10.0.0.7/24').text).toBe('10.0.0.0/24');
    expect(target('fd00::1').text).toBe('fd00::1/128');
    expect(target('fd00:0:0:0:1::/64').text).toBe('fd00::/64');
  });

  it('names the argument and cuts the value it refuses', () => {
    const long = parseTarget('1'.repeat(65));
    expect(long).toEqual({
      ok: false,
      message: expect.stringMatching(/^<address\|CIDR> is 65 characters, at most 64: "1{39}…"$/),
    });
    for (const bad of ['10.0.0.256', '10.0.0.0/33', 'fd00::/129', 'pool-a', '', '10.0.0.1/']) {
      const parsed = parseTarget(bad);
      expect(parsed.ok, bad).toBe(false);
      if (!parsed.ok) expect(parsed.message).toContain(`"${bad}" is not an IP address or CIDR`);
    }
  });
});

describe('overlapsTarget', () => {
  it('matches an IPv4 address exactly when its first prefix bits are the network', () => {
    fc.assert(
      fc.property(ipv4, ipv4, fc.integer({ min: 0, max: 32 }), (address, network, prefix) => {
        const t = target(`${network}/${prefix}`);
        const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
        expect(overlapsTarget(t, address)).toBe((toInt(address) & mask) >>> 0 === (toInt(network) & mask) >>> 0);
      }),
    );
  });

  it('always matches an address against itself, and a prefix allocation that contains the target or lies inside it', () => {
    fc.assert(
      fc.property(ipv4, (address) => {
        expect(overlapsTarget(target(address), address)).toBe(true);
      }),
    );
    expect(overlapsTarget(target('10.1.2.3'), '10.1.0.0', 16)).toBe(true);
    expect(overlapsTarget(target('10.1.0.0/16'), '10.1.2.0', 24)).toBe(true);
    expect(overlapsTarget(target('10.2.0.0/16'), '10.1.2.0', 24)).toBe(false);
    expect(overlapsTarget(target('fd00::/64'), 'fd00::5')).toBe(true);
  });

  it('never matches the other family or text that is no address', () => {
    expect(overlapsTarget(target('0.0.0.0/0'), 'fd00::1')).toBe(false);
    expect(overlapsTarget(target('::/0'), '10.0.0.1')).toBe(false);
    expect(overlapsTarget(target('0.0.0.0/0'), 'not-an-address')).toBe(false);
  });
});
