import { copyFileSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { freePort, startWatchedProcess, type WatchedProcess, waitFor } from '@tally-ipam/testenv';
import { z } from 'zod';
import { CONTROLLER_MAIN } from './guide.js';

/**
 * The IPAM controller as the guide's examples meet it: the built executable, started with the arguments of the
 * shipped Deployment (read from the rendered components) and only what must differ outside a Pod changed — the
 * kubeconfig, loopback addresses on free ports, the webhook certificate directory, the Lease's namespace.
 */

export interface StartedController {
  readonly process: WatchedProcess;
  readonly diagnosticsPort: number;
  readonly webhookPort: number;
  /** The arguments it runs with, for messages. */
  readonly args: readonly string[];
}

const LogLine = z.looseObject({ msg: z.string() });
const AddressLine = z.looseObject({ address: z.string() });
const PortLine = z.looseObject({ port: z.number().int().positive() });

function logLines(path: string): unknown[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as unknown];
      } catch {
        return [];
      }
    });
}

/** The port of the first `serving <what>` log record, from its `address` (`127.0.0.1:41234`) or its `port`. */
function servingPort(path: string, what: string): number | undefined {
  for (const line of logLines(path)) {
    const record = LogLine.safeParse(line);
    if (!record.success || record.data.msg !== `serving ${what}`) continue;
    const port = PortLine.safeParse(line);
    if (port.success) return port.data.port;
    const address = AddressLine.safeParse(line);
    if (address.success) return Number(address.data.address.split(':').pop());
  }
  return undefined;
}

function readyz(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = get({ host: '127.0.0.1', port, path: '/readyz', timeout: 5_000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    call.on('timeout', () => call.destroy(new Error('GET /readyz timed out')));
    call.on('error', reject);
  });
}

/** The shipped arguments with the ones a process outside a Pod needs in place of theirs. */
export function processArgs(
  shipped: readonly string[],
  overrides: { kubeconfig: string; webhookPort: number; webhookCertDir: string; leaseNamespace: string },
): string[] {
  const replaced = new Set(['--diagnostics-address', '--health-probe-bind-address', '--webhook-port']);
  const kept = shipped.filter((arg) => !replaced.has(arg.split('=')[0] ?? ''));
  return [
    ...kept,
    `--kubeconfig=${overrides.kubeconfig}`,
    '--diagnostics-address=127.0.0.1:0',
    '--health-probe-bind-address=127.0.0.1:0',
    `--webhook-port=${overrides.webhookPort}`,
    `--webhook-cert-dir=${overrides.webhookCertDir}`,
    `--leader-election-namespace=${overrides.leaseNamespace}`,
  ];
}

/** How often a start whose webhook port another process took first is tried again on a new port. */
const PORT_ATTEMPTS = 3;

/**
 * Starts the controller under testenv's watchdog and resolves once `/readyz` answers 200 (caches synced, webhook server
 * serving). The deadline only bounds a hang; the error carries the log's tail.
 */
export async function startController(
  kubeconfigPath: string,
  shippedArgs: readonly string[],
  options: { webhookCertDir: string; leaseNamespace: string; deadlineMs: number },
): Promise<StartedController> {
  for (let attempt = 1; ; attempt += 1) {
    const webhookPort = await freePort();
    let args: string[] = [];
    const started = startWatchedProcess({
      name: 'ipam-controller',
      command: process.execPath,
      args: (stateDir) => {
        // A copy inside the run's directory: the watchdog recognises the process by it.
        const kubeconfig = join(stateDir, 'kubeconfig');
        copyFileSync(kubeconfigPath, kubeconfig);
        args = processArgs(shippedArgs, { ...options, kubeconfig, webhookPort });
        return [CONTROLLER_MAIN, ...args];
      },
    });
    try {
      // waitFor retries whatever an attempt throws, so an exit leaves the loop as a value.
      const outcome = await waitFor(
        'the IPAM controller to answer /readyz',
        async (): Promise<{ port: number } | { exited: string } | undefined> => {
          const exit = started.exit();
          if (exit) return { exited: `the IPAM controller exited while starting (${JSON.stringify(exit)})` };
          const probes = servingPort(started.logPath, 'health probes');
          const metrics = servingPort(started.logPath, 'metrics');
          if (probes === undefined || metrics === undefined) return undefined;
          return (await readyz(probes)) === 200 ? { port: metrics } : undefined;
        },
        { timeoutMs: options.deadlineMs, intervalMs: 250 },
      );
      if ('exited' in outcome) throw new Error(outcome.exited);
      return { process: started, diagnosticsPort: outcome.port, webhookPort, args };
    } catch (error) {
      const tail = started.logTail(40);
      await started.stop();
      if (attempt < PORT_ATTEMPTS && tail.includes('EADDRINUSE')) continue;
      throw new Error(`${String(error)}\n${tail}`, { cause: error });
    }
  }
}
