/** A parsed `host:port` listen address; `host` undefined means all interfaces. */
export interface BindAddress {
  readonly host: string | undefined;
  readonly port: number;
}

/**
 * Parses a kube-style bind address: `:8080`, `127.0.0.1:8080`, `[::1]:8080`, `localhost:0`; `0` (or empty) means
 * disabled and yields undefined. Throws on anything else, naming the value.
 */
export function parseBindAddress(value: string): BindAddress | undefined {
  if (value === '0' || value === '') return undefined;
  const match = /^(?:\[(?<ipv6>[0-9a-fA-F:.]+)\]|(?<host>[^:[\]\s]*)):(?<port>\d{1,5})$/.exec(value);
  const port = Number(match?.groups?.port);
  if (!match?.groups || !Number.isInteger(port) || port > 65_535) {
    throw new Error(`invalid bind address "${value}": expected [host]:port with a port 0-65535, or 0 to disable`);
  }
  const host = match.groups.ipv6 ?? match.groups.host;
  return { host: host ? host : undefined, port };
}
