import { createHash } from 'node:crypto';

/** Longest object name the API server accepts (a DNS-1123 subdomain). */
export const MAX_OBJECT_NAME_LENGTH = 253;
/** Hex digits of the SHA-256 suffix a shortened name ends with: 40 bits keep accidental collisions negligible. */
const HASH_LENGTH = 10;

/**
 * The device part of a claim name: the device's name when it has one, its index otherwise. Device names are letters
 * and digits starting with a letter, indexes are digits, so the two can never be confused.
 */
export function deviceToken(device: { readonly name?: string | undefined }, deviceIndex: number): string {
  return device.name ?? String(deviceIndex);
}

/**
 * Shortens a name to at most 253 characters, deterministically: a name that fits is returned as is; a longer one keeps
 * a prefix and ends with `-<10 hex digits of the SHA-256 of the whole name>`, so distinct long names stay distinct. The
 * prefix never ends in '-' or '.', which keeps the result a valid DNS-1123 subdomain when the input was one.
 */
export function shortenName(name: string, maxLength = MAX_OBJECT_NAME_LENGTH): string {
  if (name.length <= maxLength) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, HASH_LENGTH);
  const prefix = name.slice(0, maxLength - HASH_LENGTH - 1).replace(/[-.]+$/, '');
  return `${prefix}-${hash}`;
}

/**
 * The name of the IPAddressClaim of one (device, pool) pair of a machine: `<machine>-<device>-<poolIndex>` (CAPV's
 * `<vm>-<deviceIndex>-<poolIndex>`, with the device's name when it has one). Deterministic, so a reconcile finds the
 * claim it created before without any state; unambiguous, because neither the device token nor the pool index contains
 * '-', so the name read from the right gives back the pair. Shortened with a hash above 253 characters.
 */
export function ipAddressClaimName(
  machineName: string,
  device: { readonly name?: string | undefined },
  deviceIndex: number,
  poolIndex: number,
): string {
  return shortenName(`${machineName}-${deviceToken(device, deviceIndex)}-${poolIndex}`);
}

/** The claim a SimCluster makes for its control-plane host. */
export function controlPlaneEndpointClaimName(simClusterName: string): string {
  return shortenName(`${simClusterName}-control-plane-endpoint`);
}
