import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { asKubeApiError } from '@tally-ipam/controller-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from './controller-process.js';
import { eventually } from './support.js';

/** Processes whose command line names `directory` (the demo's control plane runs from its state directory). */
function processesUsing(directory: string): string[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      return commandLine.includes(directory) ? [`${entry}: ${commandLine.slice(0, 120)}`] : [];
    } catch {
      return []; // exited while we looked
    }
  });
}

/** `npm start` with no cluster: its own control plane, the CRDs, the controller, a demo, a table, a clean Ctrl-C. */
describe('tally-ipam-controller with no kubeconfig (the demo)', () => {
  let demo: ControllerProcess | undefined;

  afterAll(async () => {
    if (demo && demo.child.exitCode === null) await demo.stop('SIGKILL');
    // The demo keeps its controller log for the user to read after it stops; a test run leaves nothing behind.
    const logPath = demo?.lines.map((line) => /^Controller log: (\S+)$/.exec(line)?.[1]).find(Boolean);
    if (logPath) rmSync(dirname(logPath), { recursive: true, force: true });
  });

  it('starts a local control plane, prints the claims table, refuses deleting a used pool, and cleans up on SIGINT', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.KUBECONFIG;
    delete env.TALLY_TEST_KUBECONFIG;
    delete env.KUBERNETES_SERVICE_HOST;
    // TALLY_CACHE_DIR (if set) passes through, so the binaries built for the test control plane are reused.
    demo = startController([], env);

    await demo.waitForLine((line) => line.startsWith('Press Ctrl-C'), 'the end of the demo table', 300_000);
    const output = demo.lines.join('\n');
    expect(output).toContain('starting an embedded local control plane');
    const row = (claim: string): string => demo?.lines.find((line) => line.startsWith(`${claim} `)) ?? '';
    expect(row('demo-control-plane-0')).toMatch(
      /TallyIPPool\/workers-v4\s+10\.10\.0\.10\/24\s+10\.10\.0\.1\s+reserved/,
    );
    expect(row('demo-worker-2')).toMatch(/10\.10\.0\.42\/24/);
    const lowest = ['demo-worker-0', 'demo-worker-1'].map((claim) => /10\.10\.0\.\d+/.exec(row(claim))?.[0]).sort();
    expect(lowest).toEqual(['10.10.0.11', '10.10.0.12']);
    expect(row('demo-worker-0-v6')).toMatch(/TallyIPPool\/workers-v6\s+fd00:10::1[0-9a-f]{2}\/64/);
    // fd00:200::/64 is excluded, so the first prefix handed out is the next /64.
    expect(row('demo-worker-0-prefix')).toMatch(/TallyPrefixPool\/node-prefixes\s+fd00:200:0:1::\/64/);
    // 90 listed minus 10 excluded; 4 claims.
    expect(demo.lines.find((line) => line.startsWith('TallyIPPool/workers-v4'))).toMatch(/\s80\s+4\s+76$/);

    const kubeconfigPath = /export KUBECONFIG=(\S+)/.exec(output)?.[1];
    if (!kubeconfigPath) throw new Error(`no KUBECONFIG line in the output:\n${output}`);
    const stateDir = dirname(kubeconfigPath);
    expect(processesUsing(stateDir).length).toBeGreaterThanOrEqual(2);

    // The webhook is registered with the demo's API server: a pool with allocated addresses cannot be deleted. The
    // API server loads a new configuration asynchronously, so ask with dry runs (nothing is deleted) until it answers.
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    const pools = kubeConfig.makeApiClient(CustomObjectsApi);
    const refusal = await eventually('the pool webhook refuses deleting workers-v4', async () => {
      const error = await pools
        .deleteNamespacedCustomObject({
          group: 'ipam.cluster.x-k8s.io',
          version: 'v1alpha1',
          namespace: 'tally-demo',
          plural: 'tallyippools',
          name: 'workers-v4',
          dryRun: 'All',
        })
        .then(
          () => undefined,
          (caught: unknown) => asKubeApiError(caught),
        );
      if (!error?.serverMessage.includes('validation.tallyippool.ipam.cluster.x-k8s.io')) {
        throw new Error(`not refused by the webhook: ${error?.serverMessage ?? 'allowed'}`);
      }
      return error;
    });
    expect(refusal.statusCode).toBe(400);
    expect(refusal.serverMessage).toContain(
      'Pool has IPAddresses allocated. Cannot delete Pool until all IPAddresses have been removed. ' +
        'TallyIPPool tally-demo/workers-v4 has 4 allocated: [10.10.0.10-10.10.0.12 10.10.0.42]',
    );

    expect(await demo.stop('SIGINT')).toBe(0);
    expect(demo.lines).toContain('Stopped the local control plane.');
    const logPath = /^Controller log: (\S+)$/m.exec(output)?.[1] ?? '';
    expect(demo.lines).toContain(`Controller log kept at ${logPath}`);
    expect(readFileSync(logPath, 'utf8')).toContain('starting workers');
    expect(processesUsing(stateDir)).toEqual([]);
    expect(existsSync(stateDir)).toBe(false);
  });
});
