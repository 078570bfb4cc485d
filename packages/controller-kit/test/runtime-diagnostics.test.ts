import { request } from 'node:https';
import { connect } from 'node:tls';
import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeTransport } from '../src/client/transport.js';
import { DiagnosticsAuthorizer } from '../src/manager/diagnostics.js';
import { Manager } from '../src/manager/manager.js';
import { parseTLSOptions } from '../src/manager/tls-options.js';

/**
 * `/metrics` as Cluster API providers serve it, against the real API server (RBAC on, ServiceAccount tokens from the
 * TokenRequest API): HTTPS with a self-signed certificate, TokenReview authentication, SubjectAccessReview
 * authorization of the non-resource URL `/metrics`.
 */
let namespace: TestNamespace;
let admin: KubeTransport;
let allowedToken: string;
let deniedToken: string;
const readerRole = `tally-test-metrics-reader-${process.pid}`;

async function serviceAccountToken(name: string): Promise<string> {
  await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace.name}/serviceaccounts`,
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  const answer = (await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace.name}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  })) as { status?: { token?: string } };
  const token = answer.status?.token;
  if (!token) throw new Error(`no token for ServiceAccount ${name}`);
  return token;
}

beforeAll(async () => {
  const { kubeConfig } = testEnv();
  admin = new KubeTransport(kubeConfig);
  namespace = await createTestNamespace(kubeConfig, 'diagnostics');
  allowedToken = await serviceAccountToken('scraper');
  deniedToken = await serviceAccountToken('stranger');
  // The metrics-reader ClusterRole the manifests ship, bound to the scraper only.
  await admin.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: readerRole },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    },
  });
  await admin.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: readerRole },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: readerRole },
      subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: namespace.name }],
    },
  });
});

afterAll(async () => {
  for (const kind of ['clusterrolebindings', 'clusterroles']) {
    await admin
      ?.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/${kind}/${readerRole}` })
      .catch(() => undefined);
  }
  admin?.close();
  await namespace?.delete();
});

/** A scrape over HTTPS; the certificate is self-signed, so it is not verified here (it is checked separately). */
function scrape(port: number, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        rejectUnauthorized: false,
        agent: false,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function handshake(port: number, maxVersion: 'TLSv1.2' | 'TLSv1.3'): Promise<{ protocol: string | null; san: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, maxVersion }, () => {
      const result = { protocol: socket.getProtocol(), san: socket.getPeerCertificate().subjectaltname ?? '' };
      socket.end();
      resolve(result);
    });
    socket.on('error', reject);
  });
}

describe('secure diagnostics', () => {
  it('serves /metrics over HTTPS to an allowed ServiceAccount only: 200, 403 denied, 401 without a token', async () => {
    const manager = new Manager({
      kubeConfig: testEnv().kubeConfig,
      name: 'diagnostics-test',
      logger: pino({ level: 'silent' }),
      diagnostics: { address: '127.0.0.1:0', tls: parseTLSOptions('VersionTLS13', undefined) },
      apiServerUnreachableTimeoutMs: 0,
    });
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      await expect.poll(() => manager.diagnosticsPort, { timeout: 30_000 }).toBeDefined();
      const port = manager.diagnosticsPort ?? 0;
      const allowed = await scrape(port, allowedToken);
      expect(allowed.status).toBe(200);
      expect(allowed.body).toContain('# TYPE process_cpu_user_seconds_total counter');
      const denied = await scrape(port, deniedToken);
      expect(denied.status).toBe(403);
      expect(denied.body).toContain(
        `Forbidden: user "system:serviceaccount:${namespace.name}:stranger" may not get non-resource URL "/metrics"`,
      );
      expect((await scrape(port)).status).toBe(401);
      expect((await scrape(port, 'not-a-token')).status).toBe(401);
      // --tls-min-version=VersionTLS13: a TLS 1.2 client is refused; the certificate is the self-signed one.
      const tls13 = await handshake(port, 'TLSv1.3');
      expect(tls13.protocol).toBe('TLSv1.3');
      expect(tls13.san).toContain('DNS:localhost');
      await expect(handshake(port, 'TLSv1.2')).rejects.toThrow(/protocol version|alert/i);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('caches the reviews briefly: a repeated scrape sends no new TokenReview or SubjectAccessReview', async () => {
    const authorizer = new DiagnosticsAuthorizer(testEnv().kubeConfig);
    try {
      expect(await authorizer.decide(`Bearer ${allowedToken}`)).toMatchObject({ status: 200 });
      expect(authorizer.reviewsSent).toBe(2);
      expect(await authorizer.decide(`Bearer ${allowedToken}`)).toMatchObject({ status: 200 });
      expect(authorizer.reviewsSent).toBe(2);
      expect(await authorizer.decide(`Bearer ${deniedToken}`)).toMatchObject({ status: 403 });
      expect(await authorizer.decide(`Bearer ${deniedToken}`)).toMatchObject({ status: 403 });
      expect(authorizer.reviewsSent).toBe(4);
      expect(await authorizer.decide(undefined)).toMatchObject({ status: 401 });
      expect(await authorizer.decide('Basic dXNlcjpwYXNz')).toMatchObject({ status: 401 });
      expect(authorizer.reviewsSent).toBe(4);
    } finally {
      authorizer.close();
    }
  });
});
