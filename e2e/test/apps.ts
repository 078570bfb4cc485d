import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort, startWatchedProcess, type WatchedProcess } from '@tally-ipam/testenv';
import { z } from 'zod';

/** The built executables, run exactly as `npm start` and the containers run them. */
export const APPS = {
  ipam: {
    name: 'ipam-controller',
    mainJs: fileURLToPath(new URL('../../apps/ipam-controller/dist/main.js', import.meta.url)),
    packageName: '@tally-ipam/ipam-controller',
    webhookConfigDir: fileURLToPath(new URL('../../apps/ipam-controller/config/webhook/', import.meta.url)),
  },
  sim: {
    name: 'sim-infra-controller',
    mainJs: fileURLToPath(new URL('../../apps/sim-infra-controller/dist/main.js', import.meta.url)),
    packageName: '@tally-ipam/sim-infra-controller',
    webhookConfigDir: fileURLToPath(new URL('../../apps/sim-infra-controller/config/webhook/', import.meta.url)),
  },
} as const;
export type AppKey = keyof typeof APPS;

/**
 * What the global setup tells the test files about a running app (plain data: it crosses vitest's `provide`): a local
 * process (testenv mode, external mode), or the Pods of its Deployment (the kind lane, installed from its components).
 */
export type ProvidedApp =
  | { readonly kind: 'process'; readonly pid: number; readonly logPath: string }
  | {
      readonly kind: 'pods';
      readonly namespace: string;
      readonly deployment: string;
      /** The Pods' label selector. */
      readonly podSelector: string;
      /** The admin kubeconfig of the cluster the Pods run in (for `kubectl logs`). */
      readonly kubeconfigPath: string;
    };
export type ProvidedApps = Readonly<Record<AppKey, ProvidedApp>>;

export const APPS_PROVIDE_KEY = 'tallyE2eApps';
/** Whether the apps' admission webhooks are registered with the API server (not on an external cluster). */
export const WEBHOOKS_PROVIDE_KEY = 'tallyE2eWebhooks';
/**
 * Whether the suite's IPAM controller serves Metal3's API as well (the kind lane's Pods, installed with
 * `TALLY_IPAM_ENABLE_METAL3=true`); a second controller serving it would contend for the same pools.
 */
export const METAL3_PROVIDE_KEY = 'tallyE2eMetal3';

declare module 'vitest' {
  export interface ProvidedContext {
    tallyE2eApps: ProvidedApps;
    tallyE2eWebhooks: boolean;
    tallyE2eMetal3: boolean;
  }
}

/** The manager's `serving health probes` log line (pino JSON), which names the port it bound. */
const ServingProbesLine = z.looseObject({ msg: z.literal('serving health probes'), address: z.string() });

/** The webhook server's `serving webhooks` log line: the port it bound and every path it serves. */
const ServingWebhooksLine = z.looseObject({
  msg: z.literal('serving webhooks'),
  port: z.number().int().positive(),
  paths: z.array(z.string()),
});

/** The first record of the app's pino log that `schema` accepts. */
function logRecord<T>(logPath: string, schema: z.ZodType<T>): T | undefined {
  let text: string;
  try {
    text = readFileSync(logPath, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    const parsed = schema.safeParse(record);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

function healthProbePort(logPath: string): number | undefined {
  const serving = logRecord(logPath, ServingProbesLine);
  if (!serving) return undefined;
  const port = Number(serving.address.split(':').pop());
  if (!Number.isInteger(port) || port <= 0) {
    throw new Error(`the "serving health probes" line of ${logPath} has no port: address=${serving.address}`);
  }
  return port;
}

function readyzStatus(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = request({ host: '127.0.0.1', port, path: '/readyz', timeout: 5_000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    call.on('timeout', () => call.destroy(new Error(`GET 127.0.0.1:${port}/readyz timed out`)));
    call.on('error', reject);
    call.end();
  });
}

/** The app's admission webhook server: where it listens and the paths it serves (from its own log). */
export interface ServedWebhooks {
  readonly port: number;
  readonly paths: readonly string[];
}

export interface StartedApp {
  readonly process: WatchedProcess;
  /** Undefined when the app was started without its webhook server. */
  readonly webhooks: ServedWebhooks | undefined;
}

export interface StartAppOptions {
  /** Serve the admission webhooks with the certificate in this directory (`tls.crt`, `tls.key`); off when absent. */
  readonly webhookCertDir?: string;
  readonly deadlineMs?: number;
  /** More flags, after the ones every start gets (e.g. `--enable-metal3-ipam`). */
  readonly extraArgs?: readonly string[];
  /** Another build of the app (an earlier release's `dist/main.js`) instead of this tree's. */
  readonly mainJs?: string;
}

/** How often a start whose webhook port was taken between choosing and binding it is tried again. */
const PORT_RACE_ATTEMPTS = 3;

/**
 * Starts a built app against the cluster (`--kubeconfig`, all namespaces, probes and metrics on free loopback ports,
 * the webhook server on a free port with `webhookCertDir`'s certificate, or off) under testenv's watchdog, and
 * resolves once its `/readyz` answers 200 (caches synced, webhook server serving). The deadline only bounds a hang;
 * the error carries the log's tail.
 */
export async function startApp(
  app: AppKey,
  kubeconfigPath: string,
  options: StartAppOptions = {},
): Promise<StartedApp> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startAppOnce(app, kubeconfigPath, options);
    } catch (error) {
      // A free port is only free until someone binds it: another engineer's suite may take it first.
      if (!(error instanceof PortTakenError) || attempt >= PORT_RACE_ATTEMPTS) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function startAppOnce(app: AppKey, kubeconfigPath: string, options: StartAppOptions): Promise<StartedApp> {
  const { name, packageName } = APPS[app];
  const mainJs = options.mainJs ?? APPS[app].mainJs;
  if (!existsSync(mainJs)) {
    throw new Error(`${mainJs} does not exist: build it with \`pnpm turbo run build --filter=${packageName}\``);
  }
  const webhookArgs =
    options.webhookCertDir === undefined
      ? ['--webhook-port=0']
      : [`--webhook-port=${await freePort()}`, `--webhook-cert-dir=${options.webhookCertDir}`];
  const process_ = startWatchedProcess({
    name,
    command: process.execPath,
    args: (stateDir) => {
      // A copy inside the run's directory: the watchdog recognises the process by it.
      const kubeconfig = join(stateDir, 'kubeconfig');
      copyFileSync(kubeconfigPath, kubeconfig);
      return [
        mainJs,
        `--kubeconfig=${kubeconfig}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        ...webhookArgs,
        ...(options.extraArgs ?? []),
      ];
    },
  });
  const deadline = Date.now() + (options.deadlineMs ?? 180_000);
  let last = 'no "serving health probes" log line yet';
  for (;;) {
    const exit = process_.exit();
    if (exit) {
      await process_.stop();
      const tail = process_.logTail(40);
      const message = `${name} exited while starting (${JSON.stringify(exit)}):\n${tail}`;
      throw tail.includes('EADDRINUSE') ? new PortTakenError(message) : new Error(message);
    }
    const port = healthProbePort(process_.logPath);
    if (port !== undefined) {
      try {
        const status = await readyzStatus(port);
        if (status === 200) {
          if (options.webhookCertDir === undefined) return { process: process_, webhooks: undefined };
          // /readyz includes the webhook server's check, so its line is written by now.
          const served = logRecord(process_.logPath, ServingWebhooksLine);
          if (served) return { process: process_, webhooks: { port: served.port, paths: served.paths } };
          last = '/readyz answered 200 but no "serving webhooks" log line yet';
        } else {
          last = `/readyz answered ${status}`;
        }
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
    }
    if (Date.now() > deadline) {
      await process_.stop();
      throw new Error(
        `${name} did not become ready (last: ${last}); log ${process_.logPath}:\n${process_.logTail(40)}`,
      );
    }
    await sleep(200);
  }
}

/** Where an app's log is: its file, or the `kubectl logs` command of its Pods. */
export function appLogHint(app: ProvidedApp): string {
  if (app.kind === 'process') return app.logPath;
  return `kubectl --kubeconfig ${app.kubeconfigPath} -n ${app.namespace} logs -l ${app.podSelector} --prefix --tail=-1`;
}

/**
 * Throws, with the log's tail, when an app the global setup started as a process is no longer running. An app in
 * Pods is its Deployment's to keep running (the kubelet restarts a container that died); its log hint says where to
 * look.
 */
export function assertAppsRunning(apps: ProvidedApps): void {
  for (const [key, app] of Object.entries(apps)) {
    if (app.kind === 'pods') continue;
    try {
      process.kill(app.pid, 0);
    } catch {
      const tail = existsSync(app.logPath) ? readFileSync(app.logPath, 'utf8').split('\n').slice(-30).join('\n') : '';
      throw new Error(`the ${key} app (pid ${app.pid}) is not running; its log ${app.logPath} ends:\n${tail}`);
    }
  }
}
