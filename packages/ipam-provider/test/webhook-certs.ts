// @peculiar/x509 finds its algorithms through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface WebhookCertDir {
  /** Holds `tls.crt` and `tls.key`, the WebhookServer's default file names. */
  readonly path: string;
  /** The CA the API server must trust (`caBundle`). */
  readonly caPem: string;
  remove(): Promise<void>;
}

function serial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x10; // positive and without a leading zero byte
  return Buffer.from(bytes).toString('hex');
}

function keys(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']) as Promise<webcrypto.CryptoKeyPair>;
}

/** A throwaway CA and a serving certificate for 127.0.0.1 (what the API server dials in url mode), in a temp dir. */
export async function createWebhookCertDir(): Promise<WebhookCertDir> {
  const notBefore = new Date(Date.now() - DAY_MS);
  const notAfter = new Date(Date.now() + DAY_MS);
  const caKeys = await keys();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=tally-ipam-provider-webhook-test-ca',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
    ],
  });
  const servingKeys = await keys();
  const serving = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=tally-ipam-provider-webhook-test',
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: servingKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }]),
    ],
  });
  const keyDer = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', servingKeys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${keyDer.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n`;
  const path = await mkdtemp(join(tmpdir(), 'tally-pool-webhook-'));
  await writeFile(join(path, 'tls.crt'), serving.toString('pem'), { mode: 0o600 });
  await writeFile(join(path, 'tls.key'), keyPem, { mode: 0o600 });
  return { path, caPem: ca.toString('pem'), remove: () => rm(path, { recursive: true, force: true }) };
}
