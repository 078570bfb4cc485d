// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const HOUR_MS = 60 * 60 * 1000;

export interface ServingCertDir {
  /** Holds `tls.crt` and `tls.key` (the webhook server's default names). */
  readonly path: string;
  /** The CA to put in the webhook configuration's `caBundle`. */
  readonly caPem: string;
  remove(): Promise<void>;
}

function serialNumber(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x10; // positive, no leading zero byte
  return Buffer.from(bytes).toString('hex');
}

async function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

/** A throwaway CA and a serving certificate for 127.0.0.1, the address the API server calls in url mode. */
export async function createServingCertDir(): Promise<ServingCertDir> {
  const notBefore = new Date(Date.now() - HOUR_MS);
  const notAfter = new Date(Date.now() + 24 * HOUR_MS);
  const caKeys = await keyPair();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=sim-infra-webhook-test-ca',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
    ],
  });
  const servingKeys = await keyPair();
  const serving = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: 'CN=sim-infra-webhook-test',
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
  const path = await mkdtemp(join(tmpdir(), 'sim-infra-webhook-'));
  await writeFile(join(path, 'tls.crt'), serving.toString('pem'), { mode: 0o600 });
  await writeFile(join(path, 'tls.key'), keyPem, { mode: 0o600 });
  return { path, caPem: ca.toString('pem'), remove: () => rm(path, { recursive: true, force: true }) };
}
