// @peculiar/x509 finds its algorithms through tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { hostname } from 'node:os';
import * as x509 from '@peculiar/x509';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

/** A certificate and key in PEM. */
export interface PemCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * A self-signed serving certificate for this host, made at start when no certificate directory is given, as
 * controller-runtime's metrics server does (`SecureServing` without `CertDir`). Scrapers either skip verification or
 * pin it; for a verifiable certificate, mount one (cert-manager) and pass its directory.
 */
export async function generateSelfSignedCertificate(validDays = 365): Promise<PemCertificate> {
  x509.cryptoProvider.set(webcrypto);
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const serial = webcrypto.getRandomValues(new Uint8Array(16));
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x10; // positive, no leading zero byte for DER to strip
  const host = hostname();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(serial).toString('hex'),
    name: `CN=${host.replace(/[,=+<>#;"\\]/g, '-')}`,
    notBefore: new Date(Date.now() - 60 * 60 * 1000),
    notAfter: new Date(Date.now() + validDays * DAY_MS),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(
        [
          { type: 'dns', value: host },
          { type: 'dns', value: 'localhost' },
          { type: 'ip', value: '127.0.0.1' },
          { type: 'ip', value: '::1' },
        ],
        false,
      ),
    ],
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return {
    certPem: certificate.toString('pem'),
    keyPem: `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`,
  };
}
