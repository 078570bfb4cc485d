import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startWatchedProcess, type WatchedProcess } from '@tally-ipam/testenv';
import { z } from 'zod';

/** The built executables, run exactly as `npm start` and the containers run them. */
export const APPS = {
  ipam: {
    name: 'ipam-controller',
    mainJs: fileURLToPath(new URL('../../apps/ipam-controller/dist/main.js', import.meta.url)),
    packageName: '@tally-ipam/ipam-controller',
  },
  sim: {
    name: 'sim-infra-controller',
    mainJs: fileURLToPath(new URL('../../apps/sim-infra-controller/dist/main.js', import.meta.url)),
    packageName: '@tally-ipam/sim-infra-controller',
  },
} as const;
export type AppKey = keyof typeof APPS;

/** What the global setup tells the test files about a running app (plain data: it crosses vitest's `provide`). */
export interface ProvidedApp {
  readonly pid: number;
  readonly logPath: string;
}
export type ProvidedApps = Readonly<Record<AppKey, ProvidedApp>>;

export const APPS_PROVIDE_KEY = 'tallyE2eApps';

declare module 'vitest' {
  export interface ProvidedContext {
    tallyE2eApps: ProvidedApps;
  }
}

/** The manager's `serving health probes` log line (pino JSON), which names the port it bound. */
const ServingLine = z.looseObject({ msg: z.literal('serving health probes'), address: z.string() });

function healthProbePort(logPath: string): number | undefined {
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
    const serving = ServingLine.safeParse(record);
    if (!serving.success) continue;
    const port = Number(serving.data.address.split(':').pop());
    if (!Number.isInteger(port) || port <= 0) {
      throw new Error(`the "serving health probes" line of ${logPath} has no port: address=${serving.data.address}`);
    }
    return port;
  }
  return undefined;
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

/**
 * Starts a built app against the cluster (`--kubeconfig`, all namespaces, no webhook server, probes and metrics on
 * free loopback ports) under testenv's watchdog, and resolves once its `/readyz` answers 200 (caches synced). The
 * deadline only bounds a hang; the error carries the log's tail.
 */
export async function startApp(app: AppKey, kubeconfigPath: string, deadlineMs = 180_000): Promise<WatchedProcess> {
  const { name, mainJs, packageName } = APPS[app];
  if (!existsSync(mainJs)) {
    throw new Error(`${mainJs} does not exist: build it with \`pnpm turbo run build --filter=${packageName}\``);
  }
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
        '--webhook-port=0',
      ];
    },
  });
  const deadline = Date.now() + deadlineMs;
  let last = 'no "serving health probes" log line yet';
  for (;;) {
    const exit = process_.exit();
    if (exit) {
      await process_.stop();
      throw new Error(`${name} exited while starting (${JSON.stringify(exit)}):\n${process_.logTail(40)}`);
    }
    const port = healthProbePort(process_.logPath);
    if (port !== undefined) {
      try {
        const status = await readyzStatus(port);
        if (status === 200) return process_;
        last = `/readyz answered ${status}`;
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

/** Throws, with the log's tail, when an app the global setup started is no longer running. */
export function assertAppsRunning(apps: ProvidedApps): void {
  for (const [key, app] of Object.entries(apps)) {
    try {
      process.kill(app.pid, 0);
    } catch {
      const tail = existsSync(app.logPath) ? readFileSync(app.logPath, 'utf8').split('\n').slice(-30).join('\n') : '';
      throw new Error(`the ${key} app (pid ${app.pid}) is not running; its log ${app.logPath} ends:\n${tail}`);
    }
  }
}
