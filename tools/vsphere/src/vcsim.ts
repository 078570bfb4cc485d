import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, startWatchedProcess } from '@tally-ipam/testenv';
import { z } from 'zod';
import { ensureVcsim, type VcsimBinary } from './vcsim-binary.js';
import { waitWhileRunning } from './wait.js';

/**
 * The line the simulator writes once it answers (go/vcsim/main.go `ready`): to its ready file and to stdout, where a
 * simulator in a Pod reports it (the container's log).
 */
export const VcsimReadyLine = z.object({
  url: z.string().startsWith('https://127.0.0.1:'),
  server: z.string().min(1),
  thumbprint: z.string().regex(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/),
  inspectUrl: z.string().startsWith('http://127.0.0.1:'),
  datacenter: z.string().min(1),
  cluster: z.string().min(1),
  datastore: z.string().min(1),
  resourcePool: z.string().min(1),
  folder: z.string().min(1),
  networks: z.array(z.string().min(1)).min(2),
  template: z.string().min(1),
});

/** One VM as GET /vms reports it (go/vcsim/inspect.go `vmView`). */
export const VcsimVm = z.object({
  name: z.string(),
  instanceUuid: z.string(),
  biosUuid: z.string(),
  powerState: z.string(),
  template: z.boolean(),
  nics: z.array(z.object({ mac: z.string(), network: z.string() })),
  guestNet: z.array(z.object({ mac: z.string(), addresses: z.array(z.string()) })),
  metadata: z.string().nullable(),
  userdata: z.string().nullable(),
  extraConfig: z.array(z.object({ key: z.string(), value: z.string() })),
});
export type VcsimVm = z.infer<typeof VcsimVm>;

export type VcsimReadyLine = z.infer<typeof VcsimReadyLine>;

/** What a scenario needs of a simulator, wherever it runs (a process here, a Pod in a kind cluster). */
export type VcsimEndpoint = Pick<
  Vcsim,
  | 'server'
  | 'thumbprint'
  | 'datacenter'
  | 'cluster'
  | 'datastore'
  | 'resourcePool'
  | 'folder'
  | 'networks'
  | 'template'
  | 'vms'
  | 'stop'
>;

export interface Vcsim {
  /** `https://127.0.0.1:<port>/sdk`. */
  readonly url: string;
  /** `127.0.0.1:<port>`: what a VSphereCluster's `spec.server` names. */
  readonly server: string;
  /** SHA-1 fingerprint of its throwaway certificate, colon-separated: `VSphereCluster.spec.thumbprint`. */
  readonly thumbprint: string;
  /** The only credentials it accepts (made up per start). */
  readonly username: string;
  readonly password: string;
  readonly datacenter: string;
  readonly cluster: string;
  readonly datastore: string;
  readonly resourcePool: string;
  readonly folder: string;
  /** Two networks: a standard one and a distributed portgroup. */
  readonly networks: readonly [string, string, ...string[]];
  /** The VM template to clone. */
  readonly template: string;
  readonly binary: VcsimBinary;
  readonly pid: number;
  readonly logPath: string;
  /** Every VM the simulator holds, sorted by name (the template included). */
  vms(): Promise<VcsimVm[]>;
  /** Kills it and removes its directory (datastore files included). Idempotent. */
  stop(): Promise<void>;
}

export interface VcsimCredentials {
  readonly username: string;
  readonly password: string;
}

/** Made-up credentials for a simulator (URL-safe, so they never need quoting in CAPV's credentials file). */
export function vcsimCredentials(): VcsimCredentials {
  return { username: 'tally', password: randomBytes(18).toString('base64url') };
}

export interface StartVcsimOptions {
  /** The CAPV release whose govmomi it is built with; default `capvVersionFor()`, the release paired with the run's Cluster API release. */
  readonly capvVersion?: string;
  /**
   * The only credentials it accepts; made up when absent. Simulators started one after another with the same
   * credentials serve one CAPV manager (whose credentials file holds them).
   */
  readonly credentials?: VcsimCredentials;
  readonly onProgress?: (message: string) => void;
  /** Deadline for the ready line; only against a hang (default 120 s). */
  readonly timeoutMs?: number;
}

/**
 * Starts our vCenter simulator (`go/vcsim`) on 127.0.0.1 with a throwaway TLS certificate, made-up credentials and a
 * VM template, under testenv's watchdog (own process group, log file, killed if this process dies). Its temporary
 * files (the simulated datastore) live in its state directory, which `stop()` and the watchdog remove.
 */
export async function startVcsim(options: StartVcsimOptions = {}): Promise<Vcsim> {
  const binary = await ensureVcsim({ capvVersion: options.capvVersion, onProgress: options.onProgress });
  const { username, password } = options.credentials ?? vcsimCredentials();
  let readyFile = '';
  const process_ = startWatchedProcess({
    name: 'vcsim',
    command: binary.path,
    args: (stateDir) => {
      readyFile = join(stateDir, 'ready.json');
      return [
        '--listen=127.0.0.1:0',
        '--inspect-listen=127.0.0.1:0',
        `--username=${username}`,
        `--ready-file=${readyFile}`,
        // The simulated datastore's files: inside the state directory, they go with it (stop() or the watchdog).
        `--tmpdir=${join(stateDir, 'datastore')}`,
      ];
    },
    env: { ...process.env, VCSIM_PASSWORD: password },
  });
  try {
    options.onProgress?.(`starting the vCenter simulator (log: ${process_.logPath})`);
    const ready = await waitWhileRunning(
      'the vCenter simulator to write its ready line',
      process_,
      'the simulator',
      async () => {
        const text = await readFile(readyFile, 'utf8').catch(() => undefined);
        return text === undefined ? undefined : VcsimReadyLine.parse(JSON.parse(text));
      },
      { timeoutMs: options.timeoutMs ?? 120_000, intervalMs: 100, hint: process_.logPath },
    );
    const [first, second, ...rest] = ready.networks;
    if (first === undefined || second === undefined) throw new Error('the simulator reported fewer than two networks');
    const inspectUrl = ready.inspectUrl;
    return {
      ...ready,
      networks: [first, second, ...rest],
      username,
      password,
      binary,
      pid: process_.pid,
      logPath: process_.logPath,
      vms: async () => {
        const response = await fetch(`${inspectUrl}/vms`);
        if (!response.ok) throw new Error(`GET ${inspectUrl}/vms answered ${response.status}`);
        return z.array(VcsimVm).parse(await response.json());
      },
      stop: () => process_.stop(),
    };
  } catch (error) {
    await process_.stop();
    throw new Error(`starting the vCenter simulator failed: ${errorMessage(error)}`, { cause: error });
  }
}
