import { parse } from 'yaml';
import { z } from 'zod';

/**
 * The network part of the cloud-init metadata CAPV writes into a VM (`guestinfo.metadata`, a netplan v2 document,
 * CAPV's `pkg/util/constants.go`): what the VM's guest is configured with, NIC by NIC (matched by MAC address).
 */
const Ethernet = z.looseObject({
  match: z.looseObject({ macaddress: z.string().min(1) }),
  'set-name': z.string().optional(),
  dhcp4: z.boolean().optional(),
  dhcp6: z.boolean().optional(),
  addresses: z.array(z.string()).optional(),
  gateway4: z.string().optional(),
  gateway6: z.string().optional(),
});

const Metadata = z.looseObject({
  'instance-id': z.string().optional(),
  'local-hostname': z.string().optional(),
  network: z.looseObject({ version: z.literal(2), ethernets: z.record(z.string(), Ethernet) }),
});

export interface CapvNicConfig {
  /** The netplan id (`id0`, `id1`, … in device order). */
  readonly id: string;
  /** Lower-case MAC address the configuration matches. */
  readonly mac: string;
  /** Static addresses in `address/prefix` form. */
  readonly addresses: readonly string[];
  readonly gateway4?: string | undefined;
  readonly gateway6?: string | undefined;
  readonly dhcp4: boolean;
  readonly dhcp6: boolean;
}

export interface CapvMetadata {
  readonly hostname: string | undefined;
  /** In the document's order, which is CAPV's device order. */
  readonly nics: readonly CapvNicConfig[];
}

/** Parses the metadata text (already base64-decoded); throws, naming the problem, on anything else. */
export function parseCapvMetadata(text: string): CapvMetadata {
  const parsed = Metadata.safeParse(parse(text));
  if (!parsed.success) throw new Error(`not CAPV's cloud-init metadata: ${z.prettifyError(parsed.error)}\n${text}`);
  return {
    hostname: parsed.data['local-hostname'],
    nics: Object.entries(parsed.data.network.ethernets).map(([id, ethernet]) => ({
      id,
      mac: ethernet.match.macaddress.toLowerCase(),
      addresses: ethernet.addresses ?? [],
      gateway4: ethernet.gateway4,
      gateway6: ethernet.gateway6,
      dhcp4: ethernet.dhcp4 ?? false,
      dhcp6: ethernet.dhcp6 ?? false,
    })),
  };
}
