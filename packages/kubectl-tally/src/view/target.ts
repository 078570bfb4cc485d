import ipaddr from 'ipaddr.js';
import { cutValue } from './bounds.js';

/** What `who` looks for: the addresses inside one network (a single address is a /32 or /128). */
export interface Target {
  readonly family: 'ipv4' | 'ipv6';
  /** The network's first address as bytes. */
  readonly network: readonly number[];
  readonly prefix: number;
  /** Canonical text: `10.0.0.5/32`, `fd00::/64`. */
  readonly text: string;
}

/** Longest argument `who` reads: an IPv6 address in full with a zone and a prefix length fits well within it. */
export const MAX_TARGET_LENGTH = 64;

export type TargetResult = { ok: true; target: Target } | { ok: false; message: string };

function bytesOf(address: ipaddr.IPv4 | ipaddr.IPv6): number[] {
  return address.toByteArray();
}

/** The network of `bytes` at `prefix`: the host bits cleared. */
export function maskBytes(bytes: readonly number[], prefix: number): number[] {
  return bytes.map((byte, index) => {
    const bits = Math.min(8, Math.max(0, prefix - index * 8));
    return bits === 8 ? byte : byte & ((0xff << (8 - bits)) & 0xff);
  });
}

function targetOf(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): Target {
  const family = address.kind() === 'ipv4' ? 'ipv4' : 'ipv6';
  const network = maskBytes(bytesOf(address), prefix);
  const text = `${ipaddr.fromByteArray(network).toString()}/${prefix}`;
  return { family, network, prefix, text };
}

/**
 * Parses the argument of `who`: an IPv4 or IPv6 address, or a CIDR (host bits are ignored: `10.0.0.7/24` is
 * 10.0.0.0/24). IPv4-mapped IPv6 addresses stay IPv6, as the ledger writes them. Errors name the argument and show a
 * cut value.
 */
export function parseTarget(argument: string): TargetResult {
  if (argument.length > MAX_TARGET_LENGTH) {
    return {
      ok: false,
      message: `<address|CIDR> is ${argument.length} characters, at most ${MAX_TARGET_LENGTH}: "${cutValue(argument)}"`,
    };
  }
  try {
    if (argument.includes('/')) {
      const [address, prefix] = ipaddr.parseCIDR(argument);
      return { ok: true, target: targetOf(address, prefix) };
    }
    if (!ipaddr.isValid(argument)) throw new Error('not an IPv4 or IPv6 address');
    const address = ipaddr.parse(argument);
    return { ok: true, target: targetOf(address, address.kind() === 'ipv4' ? 32 : 128) };
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^ipaddr: /, '') : String(error);
    return { ok: false, message: `<address|CIDR> "${cutValue(argument)}" is not an IP address or CIDR (${why})` };
  }
}

/**
 * Whether an allocation (`address`, with `prefix` for a prefix allocation) overlaps the target: a single address
 * inside it, or a prefix that contains it or lies inside it. Text that does not parse, or of the other family, never
 * matches.
 */
export function overlapsTarget(target: Target, address: string, prefix?: number): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if ((parsed.kind() === 'ipv4' ? 'ipv4' : 'ipv6') !== target.family) return false;
  const length = target.family === 'ipv4' ? 32 : 128;
  const own = prefix === undefined ? length : Math.min(length, Math.max(0, prefix));
  const common = Math.min(own, target.prefix);
  const a = maskBytes(bytesOf(parsed), common);
  const b = maskBytes(target.network, common);
  return a.every((byte, index) => byte === b[index]);
}
