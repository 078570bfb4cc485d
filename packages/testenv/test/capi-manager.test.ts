import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { capiCRDPaths } from '../src/capi.js';
import { startCapiManager } from '../src/capi-manager.js';
import { ensureCapiManager } from '../src/capi-manager-binary.js';
import {
  CAPI_WEBHOOK_CONFIGURATION_NAMES,
  CAPI_WEBHOOK_SERVICE,
  readCapiConversions,
  readCapiWebhookConfigurations,
  rewriteWebhookConfiguration,
} from '../src/capi-webhooks.js';
import type { ControlPlane } from '../src/control-plane.js';
import { readCRDs } from '../src/crds.js';
import { startExternalControlPlane } from '../src/external.js';
import { httpGet } from '../src/http.js';
import { kubeRequest } from '../src/kube-request.js';
import { testEnv } from '../src/vitest.js';
import { runFixture } from './child-process.js';
import { eventually, isAlive, processesMentioning } from './helpers.js';

const conversionSchema = z.object({
  spec: z.object({
    conversion: z.object({
      strategy: z.string(),
      webhook: z
        .object({
          clientConfig: z.object({
            url: z.string().optional(),
            service: z
              .object({ namespace: z.string(), name: z.string(), path: z.string(), port: z.number() })
              .optional(),
          }),
        })
        .optional(),
    }),
  }),
});

const webhookConfigurationSchema = z.object({
  webhooks: z.array(z.object({ name: z.string(), clientConfig: z.object({ url: z.string(), caBundle: z.string() }) })),
});

async function getStatus(plane: Pick<ControlPlane, 'kubeConfig'>, path: string): Promise<number> {
  return (await kubeRequest(plane.kubeConfig(), { method: 'GET', path })).status;
}

describe('the Cluster API manager binary', () => {
  it("is built once into the cache and is the core manager of the run's release", async () => {
    const first = await ensureCapiManager();
    const second = await ensureCapiManager();
    expect(second.path).toBe(first.path);
    expect(second.builtNow).toBe(false);
    expect(second.version).toBe(testEnv().capiVersion);
    expect(basename(second.path)).toBe('cluster-api');
    expect(statSync(second.path).size).toBe(second.sizeBytes);
    // pflag prints the usage to stderr.
    const help = spawnSync(second.path, ['--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(`${help.stdout}${help.stderr}`).toContain('--webhook-cert-dir');
  });
});

describe("Cluster API's webhook manifests", () => {
  it('has one mutating and one validating configuration; the rewrite points every webhook at loopback', async () => {
    const configurations = await readCapiWebhookConfigurations();
    expect(configurations.map((c) => c.name).sort()).toEqual([
      CAPI_WEBHOOK_CONFIGURATION_NAMES.mutating,
      CAPI_WEBHOOK_CONFIGURATION_NAMES.validating,
    ]);
    const paths = configurations.flatMap((c) => c.webhooks.map((w) => w.path));
    expect(paths).toContain('/validate-ipam-cluster-x-k8s-io-v1beta2-ipaddressclaim');
    expect(paths).toContain('/mutate-cluster-x-k8s-io-v1beta2-machinepool');
    const validating = configurations.find((c) => c.kind === 'ValidatingWebhookConfiguration');
    if (!validating) throw new Error('no validating configuration');
    const rewritten = webhookConfigurationSchema.parse(
      rewriteWebhookConfiguration(validating, { port: 12345, caPem: 'CA' }),
    );
    expect(rewritten.webhooks).toHaveLength(validating.webhooks.length);
    for (const [index, webhook] of rewritten.webhooks.entries()) {
      expect(webhook.clientConfig).toEqual({
        url: `https://127.0.0.1:12345${validating.webhooks[index]?.path}`,
        caBundle: Buffer.from('CA').toString('base64'),
      });
    }
  });

  it('converts exactly the CRDs that Cluster API ships', async () => {
    const conversions = await readCapiConversions();
    const crds = await readCRDs(await capiCRDPaths());
    expect(conversions.map((c) => c.crdName).sort()).toEqual(crds.map((c) => c.name).sort());
    expect(new Set(conversions.map((c) => c.path))).toEqual(new Set(['/convert']));
  });
});

describe('startCapiManager', () => {
  it('runs the manager with webhooks and conversion wired, and stop() unwires them and leaves nothing behind', async () => {
    const env = testEnv();
    const plane = await startExternalControlPlane(env.kubeconfigPath);
    // The suite's control plane is local; only the manager needs to think so.
    const local: ControlPlane = { ...plane, external: false };
    const manager = await startCapiManager(local, { verbosity: 1 });
    const stateDir = manager.stateDir;
    try {
      expect(manager.version).toBe(testEnv().capiVersion);
      expect(manager.running()).toBe(true);
      expect((await httpGet(`${manager.healthAddress}/readyz`)).status).toBe(200);
      expect(manager.conversionCRDs).toHaveLength(13);
      const crd = conversionSchema.parse(
        JSON.parse(
          (
            await kubeRequest(plane.kubeConfig(), {
              method: 'GET',
              path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusters.cluster.x-k8s.io',
            })
          ).body,
        ),
      );
      expect(crd.spec.conversion.strategy).toBe('Webhook');
      // Through Cluster API's own Service name (an ExternalName for localhost), never a url: clusterctl's merge patch
      // of these CRDs would keep a url next to its service and make them invalid.
      expect(crd.spec.conversion.webhook?.clientConfig).toEqual({
        service: { ...CAPI_WEBHOOK_SERVICE, path: '/convert', port: manager.webhookPort },
      });
      expect(
        await getStatus(
          plane,
          `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${CAPI_WEBHOOK_CONFIGURATION_NAMES.validating}`,
        ),
      ).toBe(200);
      expect(readFileSync(manager.logPath, 'utf8')).toContain('Starting manager');
    } finally {
      await manager.stop();
    }
    expect(isAlive(manager.pid)).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
    for (const name of Object.values(CAPI_WEBHOOK_CONFIGURATION_NAMES)) {
      const kind = name.includes('mutating') ? 'mutating' : 'validating';
      expect(await getStatus(plane, `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${name}`)).toBe(
        404,
      );
    }
    const after = conversionSchema.parse(
      JSON.parse(
        (
          await kubeRequest(plane.kubeConfig(), {
            method: 'GET',
            path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusters.cluster.x-k8s.io',
          })
        ).body,
      ),
    );
    expect(after.spec.conversion.strategy).toBe('None');
    expect(await getStatus(plane, `/api/v1/namespaces/capi-system/services/${CAPI_WEBHOOK_SERVICE.name}`)).toBe(404);
    // The API server no longer calls the stopped manager: a v1beta1 write works again (dry run).
    const write = await kubeRequest(plane.kubeConfig(), {
      method: 'POST',
      path: '/apis/ipam.cluster.x-k8s.io/v1beta1/namespaces/default/ipaddressclaims?dryRun=All',
      body: JSON.stringify({
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta1',
        kind: 'IPAddressClaim',
        metadata: { name: 'after-stop' },
        spec: { poolRef: { apiGroup: 'ipam.tally.dev', kind: 'Pool', name: 'p' } },
      }),
      contentType: 'application/json',
    });
    expect(write.status).toBe(201);
    await manager.stop();
  });

  it('refuses an external cluster and says what to do instead', async () => {
    const plane = await startExternalControlPlane(testEnv().kubeconfigPath);
    await expect(startCapiManager(plane)).rejects.toThrow(/cannot call its webhooks.*clusterctl init/s);
  });

  it('is killed by the watchdog when the process that started it dies', async () => {
    const holder = await runFixture<{ managerPid: number; managerStateDir: string; planeStateDir: string }>(
      'hold-capi-manager.ts',
      [],
    );
    const { managerPid, managerStateDir, planeStateDir } = holder.output;
    expect(isAlive(managerPid)).toBe(true);
    holder.child.kill('SIGKILL');
    await holder.exited;
    // Bounded only by eventually's default (90 s): a loaded machine delays the deaths of SIGKILLed processes.
    await eventually('the orphaned manager to be killed', () => !isAlive(managerPid));
    await eventually(
      'the manager and control plane processes to be gone',
      () => processesMentioning(managerStateDir).length === 0 && processesMentioning(planeStateDir).length === 0,
    );
    await eventually(`${managerStateDir} to be removed`, () => !existsSync(managerStateDir));
  });
});
