// @peculiar/x509 finds its algorithms through tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Backdated so a clock slightly behind (the API server's view) still accepts the certificate. */
const BACKDATE_MS = 60 * 60 * 1000;

/** A throwaway CA and a serving certificate written as `tls.crt`/`tls.key`, the webhook server's default names. */
export interface ServingCertDir {
  readonly path: string;
  /** PEM of the CA the API server must trust (the webhook configuration's `caBundle`). */
  readonly caPem: string;
  remove(): Promise<void>;
}

function serialNumber(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x10; // positive, and no leading zero byte for DER to strip
  return Buffer.from(bytes).toString('hex');
}

function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']) as Promise<webcrypto.CryptoKeyPair>;
}

async function privateKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

/**
 * Generates a CA valid for a day and a certificate it signs for `127.0.0.1` and `localhost` (what a local API server
 * dials in url mode), in a fresh temporary directory. For local runs only: in a cluster cert-manager issues them.
 */
export async function createServingCertDir(): Promise<ServingCertDir> {
  const notBefore = new Date(Date.now() - BACKDATE_MS);
  const notAfter = new Date(Date.now() + DAY_MS);
  const caKeys = await generateKeys();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=tally-ipam-local-webhook-ca',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const servingKeys = await generateKeys();
  const serving = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: 'CN=tally-ipam-webhook',
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: servingKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      await x509.AuthorityKeyIdentifierExtension.create(ca, false),
      new x509.SubjectAlternativeNameExtension(
        [
          { type: 'ip', value: '127.0.0.1' },
          { type: 'dns', value: 'localhost' },
        ],
        false,
      ),
    ],
  });
  const path = await mkdtemp(join(tmpdir(), 'tally-ipam-webhook-certs-'));
  await writeFile(join(path, 'tls.key'), await privateKeyPem(servingKeys.privateKey), { mode: 0o600 });
  await writeFile(join(path, 'tls.crt'), serving.toString('pem'), { mode: 0o600 });
  return { path, caPem: ca.toString('pem'), remove: () => rm(path, { recursive: true, force: true }) };
}
