// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

/** PEM text of one certificate and its private key (PKCS#8). */
export interface PemKeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Everything one control plane run needs; generated fresh per run, valid for a week. */
export interface ControlPlaneCertificates {
  /** Signs the serving and client certificates; kube-apiserver trusts it for client certs (`--client-ca-file`). */
  readonly ca: PemKeyPair;
  /** kube-apiserver's serving certificate for 127.0.0.1 and localhost. */
  readonly apiServer: PemKeyPair;
  /** Admin identity: CN=tally-testenv-admin, O=system:masters (bypasses RBAC). */
  readonly admin: PemKeyPair;
  /** Service account token signer (`--service-account-signing-key-file` / `--service-account-key-file`). */
  readonly serviceAccountKeyPem: string;
  readonly serviceAccountPublicKeyPem: string;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const VALIDITY_MS = 7 * 24 * 60 * 60 * 1000;
/** Backdated so a clock that is slightly behind (another process, a VM) still accepts the certificates. */
const BACKDATE_MS = 60 * 60 * 1000;

function pem(label: string, der: ArrayBuffer): string {
  const base64 = Buffer.from(der).toString('base64');
  const lines = base64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

async function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']) as Promise<webcrypto.CryptoKeyPair>;
}

async function privateKeyPem(keys: webcrypto.CryptoKeyPair): Promise<string> {
  return pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
}

function validity(): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  return { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(now + VALIDITY_MS) };
}

function serialNumber(): string {
  // Positive (high bit clear) 16-byte serial, as RFC 5280 requires.
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

interface IssuedCertificate {
  readonly cert: x509.X509Certificate;
  readonly keys: webcrypto.CryptoKeyPair;
}

async function createCA(commonName: string): Promise<IssuedCertificate> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${commonName}`,
    ...validity(),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys };
}

interface LeafOptions {
  readonly subject: string;
  readonly usage: 'server' | 'client';
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
}

async function issue(ca: IssuedCertificate, options: LeafOptions): Promise<IssuedCertificate> {
  const keys = await generateKeys();
  const names: x509.JsonGeneralName[] = [
    ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(options.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(
      [options.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names, false));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: options.subject,
    issuer: ca.cert.subject,
    ...validity(),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions,
  });
  return { cert, keys };
}

async function toPem(issued: IssuedCertificate): Promise<PemKeyPair> {
  return { certPem: issued.cert.toString('pem'), keyPem: await privateKeyPem(issued.keys) };
}

/** Generates a throwaway CA, kube-apiserver serving certificate, admin client certificate and SA signing key. */
export async function generateControlPlaneCertificates(): Promise<ControlPlaneCertificates> {
  const ca = await createCA('tally-testenv-ca');
  const [apiServer, admin, serviceAccount] = await Promise.all([
    issue(ca, {
      subject: 'CN=kube-apiserver',
      usage: 'server',
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
      ipAddresses: ['127.0.0.1', '10.0.0.1'],
    }),
    issue(ca, { subject: 'CN=tally-testenv-admin, O=system:masters', usage: 'client' }),
    generateKeys(),
  ]);
  return {
    ca: await toPem(ca),
    apiServer: await toPem(apiServer),
    admin: await toPem(admin),
    serviceAccountKeyPem: await privateKeyPem(serviceAccount),
    serviceAccountPublicKeyPem: pem('PUBLIC KEY', await webcrypto.subtle.exportKey('spki', serviceAccount.publicKey)),
  };
}

/** A CA and a serving certificate it signed, e.g. for a webhook server the API server calls. */
export interface ServingCertificates {
  /** The CA to put in a webhook configuration's `caBundle`. */
  readonly ca: PemKeyPair;
  readonly serving: PemKeyPair;
}

/** The names a serving certificate is for; `127.0.0.1` and `localhost` when none are given. */
export interface ServingNames {
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
}

/**
 * A throwaway CA and a serving certificate for `127.0.0.1` and `localhost` (the host of the `url` an API server on
 * loopback calls), e.g. for the Cluster API manager's webhook server; or for `names`, e.g. a webhook Service's
 * `<service>.<namespace>.svc` when the API server calls it through the Service.
 */
export async function generateServingCertificates(
  commonName: string,
  names: ServingNames = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] },
): Promise<ServingCertificates> {
  const ca = await createCA(`${commonName}-ca`);
  const serving = await issue(ca, {
    subject: `CN=${commonName}`,
    usage: 'server',
    dnsNames: names.dnsNames ?? [],
    ipAddresses: names.ipAddresses ?? [],
  });
  return { ca: await toPem(ca), serving: await toPem(serving) };
}

/** A temp dir holding `tls.crt` and `tls.key` (the webhook servers' default names) and the CA that signed them. */
export interface ServingCertDir {
  readonly path: string;
  /** The CA to put in a webhook configuration's `caBundle`. */
  readonly caPem: string;
  remove(): Promise<void>;
}

/** {@link generateServingCertificates}, written where a webhook server under test reads its certificate. */
export async function createServingCertDir(commonName: string): Promise<ServingCertDir> {
  const { ca, serving } = await generateServingCertificates(commonName);
  const path = await mkdtemp(join(tmpdir(), `${commonName}-`));
  await writeFile(join(path, 'tls.crt'), serving.certPem, { mode: 0o600 });
  await writeFile(join(path, 'tls.key'), serving.keyPem, { mode: 0o600 });
  return { path, caPem: ca.certPem, remove: () => rm(path, { recursive: true, force: true }) };
}
