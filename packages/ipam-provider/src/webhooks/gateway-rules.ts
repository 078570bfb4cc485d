import { formatIP, type PoolSpecIssue } from '@tally-ipam/allocator';
import { echo, inspectAddressEntry, inspectIP } from '@tally-ipam/api-types';
import { isPrefixPool } from './pool-address-space.js';
import type { TallyPool } from './pool-kinds.js';

/** fe80::/10: an IPv6 gateway is usually the router's link-local address, which no pool's network contains. */
const LINK_LOCAL_FIRST = 0xfe80n << 112n;
const LINK_LOCAL_LAST = LINK_LOCAL_FIRST | ((1n << 118n) - 1n);

/**
 * Whether an IP pool's gateway lies outside the network its addresses belong to (the first entry's `/prefix`, the
 * network every IPAddress is written with): a host configured from such an IPAddress cannot reach its gateway on-link.
 * The CRD's CEL already refuses a gateway of the other family and addresses outside that network; this is the rule
 * it does not have. Not checked, and why:
 * - an IPv6 link-local gateway (fe80::/10), the usual IPv6 router address, outside every global network;
 * - a host-route pool (prefix 32 for IPv4, 128 for IPv6): its network holds only the address, and the gateway is
 *   reached through an on-link route (routed and point-to-point set-ups);
 * - prefix pools: every allocation is a subnet of its own, and one gateway can lie inside at most one of them, so
 *   their gateway is passed along to each IPAddress as given.
 */
export function gatewayOutsideNetwork(pool: TallyPool): PoolSpecIssue | undefined {
  if (isPrefixPool(pool) || pool.spec.gateway === undefined) return undefined;
  const firstText = pool.spec.addresses[0];
  if (firstText === undefined) return undefined;
  const first = inspectAddressEntry(firstText);
  const gateway = inspectIP(pool.spec.gateway);
  if (!first.ok || !gateway.ok || first.value.family !== gateway.value.family) return undefined;
  const family = first.value.family;
  const bits = family === 4 ? 32 : 128;
  const prefix = pool.spec.prefix;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix >= bits) return undefined;
  const value = gateway.value.value;
  if (family === 6 && value >= LINK_LOCAL_FIRST && value <= LINK_LOCAL_LAST) return undefined;
  const hostBits = BigInt(bits - prefix);
  const network = (first.value.first >> hostBits) << hostBits;
  const broadcast = network | ((1n << hostBits) - 1n);
  if (value >= network && value <= broadcast) return undefined;
  const networkText = `${formatIP({ family, value: network })}/${prefix}`;
  return {
    field: 'spec.gateway',
    value: pool.spec.gateway,
    message:
      `gateway ${formatIP({ family, value })} is outside ${networkText}, the network of spec.addresses ` +
      `(first entry ${echo(firstText)}, spec.prefix ${prefix}): hosts given these addresses cannot reach it on-link`,
  };
}
