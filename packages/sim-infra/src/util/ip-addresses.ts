import { inspectIP } from '@tally-ipam/api-types';

/** One IPAddress bound to one of a machine's claims, with where it belongs. */
export interface ClaimedAddress {
  readonly claimName: string;
  /** The device's name, or its index as text for an unnamed device (see `deviceToken`). */
  readonly device: string;
  readonly deviceIndex: number;
  /** `IPAddress.spec` as written by the IPAM provider. */
  readonly address: string;
  readonly prefix: number;
  readonly gateway?: string | undefined;
}

/** What one device ends up with: addresses with prefix length and at most one gateway per family. */
export interface DeviceAddresses {
  readonly name: string;
  readonly ipAddrs: string[];
  readonly gateway4?: string | undefined;
  readonly gateway6?: string | undefined;
}

export type AddressValidation =
  | { readonly valid: true; readonly devices: DeviceAddresses[] }
  | { readonly valid: false; readonly problems: string[] };

type Family = 4 | 6;

interface ParsedAddress {
  readonly claimed: ClaimedAddress;
  readonly family: Family;
  readonly value: bigint;
  readonly gateway?: { readonly text: string; readonly family: Family } | undefined;
}

function familyOf(family: number): Family {
  return family === 4 ? 4 : 6;
}

function where(claimed: ClaimedAddress): string {
  return `IPAddressClaim ${claimed.claimName} (device ${claimed.device})`;
}

/**
 * Checks the addresses IPAM handed out for one machine before they are used, as CAPV does before it powers a VM on
 * (`pkg/services/govmomi/ipam/status.go`): each address is an IP with a prefix length its family allows, a gateway is an
 * IP of the address's family, the IPAM gateways of one device agree per family, and no address is handed out twice
 * across the machine's devices. Every problem is reported (not just the first), each naming the claim and the value,
 * so that one look at the condition tells the user what to fix.
 */
export function validateClaimedAddresses(addresses: readonly ClaimedAddress[]): AddressValidation {
  const problems: string[] = [];
  const parsed: ParsedAddress[] = [];
  for (const claimed of addresses) {
    const ip = inspectIP(claimed.address);
    if (!ip.ok) {
      problems.push(
        `${where(claimed)}: address ${JSON.stringify(claimed.address)} is not a valid IP address (${ip.reason})`,
      );
      continue;
    }
    const family = familyOf(ip.value.family);
    const maxPrefix = family === 4 ? 32 : 128;
    if (!Number.isInteger(claimed.prefix) || claimed.prefix < 0 || claimed.prefix > maxPrefix) {
      problems.push(
        `${where(claimed)}: prefix ${claimed.prefix} of address ${claimed.address} is not between 0 and ${maxPrefix} (IPv${family})`,
      );
      continue;
    }
    let gateway: ParsedAddress['gateway'];
    if (claimed.gateway !== undefined && claimed.gateway !== '') {
      const gatewayIP = inspectIP(claimed.gateway);
      if (!gatewayIP.ok) {
        problems.push(
          `${where(claimed)}: gateway ${JSON.stringify(claimed.gateway)} is not a valid IP address (${gatewayIP.reason})`,
        );
        continue;
      }
      const gatewayFamily = familyOf(gatewayIP.value.family);
      if (gatewayFamily !== family) {
        problems.push(
          `${where(claimed)}: gateway ${claimed.gateway} is IPv${gatewayFamily} but address ${claimed.address} is IPv${family}`,
        );
        continue;
      }
      gateway = { text: claimed.gateway, family: gatewayFamily };
    }
    parsed.push({ claimed, family, value: ip.value.value, gateway });
  }

  // Duplicates: the same address (compared by value, so "fd00::1" equals "fd00:0::1") behind two claims.
  const byValue = new Map<string, ParsedAddress>();
  for (const entry of parsed) {
    const key = `${entry.family}/${entry.value}`;
    const first = byValue.get(key);
    if (first) {
      problems.push(
        `address ${entry.claimed.address} is handed out twice: ${where(first.claimed)} and ${where(entry.claimed)}`,
      );
    } else {
      byValue.set(key, entry);
    }
  }

  // One gateway per device and family: two pools of one device that disagree cannot both be right.
  const gateways = new Map<string, ParsedAddress>();
  for (const entry of parsed) {
    if (!entry.gateway) continue;
    const key = `${entry.claimed.deviceIndex}/${entry.family}`;
    const first = gateways.get(key);
    if (!first?.gateway) {
      gateways.set(key, entry);
      continue;
    }
    const a = inspectIP(first.gateway.text);
    const b = inspectIP(entry.gateway.text);
    if (a.ok && b.ok && a.value.value !== b.value.value) {
      problems.push(
        `device ${entry.claimed.device} gets two IPv${entry.family} gateways: ${first.gateway.text} from IPAddressClaim ${first.claimed.claimName} and ${entry.gateway.text} from IPAddressClaim ${entry.claimed.claimName}`,
      );
    }
  }

  if (problems.length > 0) return { valid: false, problems };

  const devices = new Map<number, { name: string; ipAddrs: string[]; gateway4?: string; gateway6?: string }>();
  for (const entry of [...parsed].sort((x, y) => x.claimed.deviceIndex - y.claimed.deviceIndex)) {
    const device = devices.get(entry.claimed.deviceIndex) ?? { name: entry.claimed.device, ipAddrs: [] };
    device.ipAddrs.push(`${entry.claimed.address}/${entry.claimed.prefix}`);
    if (entry.gateway?.family === 4) device.gateway4 = entry.gateway.text;
    if (entry.gateway?.family === 6) device.gateway6 = entry.gateway.text;
    devices.set(entry.claimed.deviceIndex, device);
  }
  return { valid: true, devices: [...devices.values()] };
}
