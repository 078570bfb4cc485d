import { DEFAULT_CIPHERS, type SecureVersion } from 'node:tls';
import { FlagError } from './flag-error.js';

/**
 * The TLS settings of the servers the process runs (webhook, diagnostics), from Cluster API's `--tls-min-version`
 * and `--tls-cipher-suites` (`util/flags.TLSOptions`), translated into what Node's `tls.createSecureContext` takes.
 */
export interface TLSOptions {
  readonly minVersion: Extract<SecureVersion, 'TLSv1.2' | 'TLSv1.3'>;
  /** An OpenSSL cipher list for Node's `ciphers`; undefined keeps Node's defaults (CAPI: Go's defaults). */
  readonly ciphers: string | undefined;
}

/** Cluster API's default: `--tls-min-version=VersionTLS12`, no cipher list (the runtime's defaults). */
export const DEFAULT_TLS_OPTIONS: TLSOptions = { minVersion: 'TLSv1.2', ciphers: undefined };

/**
 * The names `--tls-min-version` accepts. Go's `cliflag.TLSVersion` also knows VersionTLS10 and VersionTLS11; they are
 * refused here because Node's default OpenSSL security level cannot serve them, and no API server needs them.
 */
export const TLS_VERSION_NAMES: Readonly<Record<string, TLSOptions['minVersion']>> = {
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/**
 * Go's cipher suite names (`cliflag.TLSCipherSuites`: `tls.CipherSuites()` and `tls.InsecureCipherSuites()`) mapped
 * to OpenSSL's. The TLS 1.3 suites keep their names in both. RC4 suites are absent: OpenSSL no longer has them.
 */
export const TLS_CIPHER_SUITES: Readonly<Record<string, string>> = {
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  // Go's insecure list, accepted as CAPI accepts them.
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
};

const TLS13_SUITES = new Set(['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']);

/** Node's default TLS 1.3 suites, kept when a list names only TLS 1.2 suites (Go never lets a list change TLS 1.3). */
function defaultTLS13Suites(): string[] {
  return DEFAULT_CIPHERS.split(':').filter((suite) => TLS13_SUITES.has(suite));
}

/** Parses `--tls-min-version` and `--tls-cipher-suites` (comma-separated Go names). Throws `FlagError`. */
export function parseTLSOptions(minVersion: string | undefined, cipherSuites: string | undefined): TLSOptions {
  const version = minVersion === undefined ? DEFAULT_TLS_OPTIONS.minVersion : TLS_VERSION_NAMES[minVersion];
  if (version === undefined) {
    throw new FlagError(
      'tls-min-version',
      String(minVersion),
      `must be one of ${Object.keys(TLS_VERSION_NAMES).join(', ')}`,
    );
  }
  if (cipherSuites === undefined || cipherSuites.trim() === '') return { minVersion: version, ciphers: undefined };
  const names = cipherSuites
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const openssl = names.map((name) => {
    const mapped = TLS_CIPHER_SUITES[name];
    if (mapped === undefined) {
      throw new FlagError(
        'tls-cipher-suites',
        cipherSuites,
        `unknown or unsupported cipher suite ${JSON.stringify(name.length > 64 ? `${name.slice(0, 63)}…` : name)}` +
          ' (Go names such as TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)',
      );
    }
    return mapped;
  });
  const tls13 = openssl.filter((suite) => TLS13_SUITES.has(suite));
  const tls12 = openssl.filter((suite) => !TLS13_SUITES.has(suite));
  const ciphers = [...new Set([...(tls13.length > 0 ? tls13 : defaultTLS13Suites()), ...tls12])].join(':');
  return { minVersion: version, ciphers };
}

/** The options to spread into `https.createServer` / `setSecureContext`. */
export function secureContextTLS(options: TLSOptions): { minVersion: SecureVersion; ciphers?: string } {
  return options.ciphers === undefined
    ? { minVersion: options.minVersion }
    : { minVersion: options.minVersion, ciphers: options.ciphers };
}
