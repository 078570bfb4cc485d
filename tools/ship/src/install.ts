/**
 * Installing rendered components the way `clusterctl init` does after substituting variables: every object applied
 * in order (server-side apply), with the serving certificates of the variant without cert-manager issued here.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Client } from '@tally-ipam/controller-kit/client';
import { generateServingCertificates } from '@tally-ipam/testenv';
import { resourceKindOf } from './cluster.js';
import type { Manifest } from './kustomize.js';
import type { IssuedServingCertificate, ServingCertificateRequest } from './serving-cert-secret.js';

/**
 * A throwaway CA and serving certificate per request, for its DNS names (`<service>.<namespace>.svc`, …), keyed
 * `<namespace>/<Certificate name>` as `withServingCertificateSecrets` expects.
 */
export async function issueServingCertificates(
  requests: readonly ServingCertificateRequest[],
): Promise<Map<string, IssuedServingCertificate>> {
  const issued = new Map<string, IssuedServingCertificate>();
  for (const request of requests) {
    const { ca, serving } = await generateServingCertificates(request.certificateName, { dnsNames: request.dnsNames });
    issued.set(`${request.namespace}/${request.certificateName}`, {
      certPem: serving.certPem,
      keyPem: serving.keyPem,
      caPem: ca.certPem,
    });
  }
  return issued;
}

/**
 * Server-side applies every manifest in the order given (components are ordered for install: Namespace, CRDs, RBAC,
 * Secrets, Deployments, webhook configurations), as `fieldManager`. A CRD must be served before objects of its kind
 * are applied; components carry none. Throws naming the object that failed.
 */
export async function applyManifests(
  kc: KubeConfig,
  manifests: readonly Manifest[],
  fieldManager: string,
): Promise<void> {
  const client = new Client(kc, { fieldManager });
  for (const manifest of manifests) {
    const where = `${manifest.kind} ${manifest.metadata.namespace ? `${manifest.metadata.namespace}/` : ''}${manifest.metadata.name}`;
    try {
      await client.apply(await resourceKindOf(kc, manifest), manifest);
    } catch (error) {
      throw new Error(`applying ${where} failed: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
  }
}
