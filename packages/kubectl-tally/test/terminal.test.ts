import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { ADDRESS_RESOURCE, TALLY_GROUP } from '@tally-ipam/api-types';
import { waitFor } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildScene, type Scene } from './fixtures.js';
import { CLI, usePluginTestFile } from './support.js';

/**
 * The plugin on a real terminal: each command runs in a tmux pane of 160 columns by 50 lines, against the test API
 * server, and the screen tmux captures is what a user sees. The scene is fixtures.ts's, in 10.72.0.0/16. The tmux
 * server is this file's own (its own socket), stopped after the file. TALLY_TEST_SHOW_SCREENS=1 prints the screens:
 * docs/guide/kubectl-tally.md shows them, hence the namespace of a fixed name.
 */

const TMUX = '/usr/bin/tmux';
const SOCKET = `kubectl-tally-${randomBytes(4).toString('hex')}`;
const run = promisify(execFile);
const file = usePluginTestFile();
let scene: Scene;

function tmux(...args: string[]): Promise<{ stdout: string }> {
  return run(TMUX, ['-L', SOCKET, ...args], { encoding: 'utf8' });
}

/** Runs `kubectl-tally <args>` in a fresh 160x50 pane and returns the screen once the command has finished. */
async function screenOf(session: string, args: readonly string[]): Promise<string> {
  const words = [process.execPath, CLI, ...args, '--kubeconfig', testEnv().kubeconfigPath].map((word) => `'${word}'`);
  // `cat` keeps the pane (and its screen) open after the command, until the session is killed.
  await tmux(
    'new-session',
    '-d',
    '-s',
    session,
    '-x',
    '160',
    '-y',
    '50',
    `${words.join(' ')}; echo '[exit '$?']'; exec cat`,
  );
  const screen = await waitFor(`the ${session} pane to show the command's exit`, async () => {
    const { stdout } = await tmux('capture-pane', '-p', '-t', session);
    return /\[exit \d+\]/.test(stdout) ? stdout : undefined;
  });
  await tmux('kill-session', '-t', session);
  if (process.env.TALLY_TEST_SHOW_SCREENS === '1')
    process.stderr.write(`--- kubectl tally ${args.join(' ')}\n${screen.trimEnd()}\n`);
  return screen;
}

beforeAll(async () => {
  scene = await buildScene(file.client, await file.namespace('kubectl-tally-demo', true), '10.72');
});

afterAll(async () => {
  await tmux('kill-server').catch(() => undefined);
});

describe('kubectl tally on a terminal (tmux)', () => {
  it('pools: the header and each pool as a row, within 160 columns', async () => {
    const lines = (await screenOf('pools', ['pools', '-n', scene.namespace])).split('\n');
    expect(lines[0]).toMatch(/^KIND\s+NAME\s+TOTAL\s+USED\s+FREE\s+OUT-OF-RANGE\s+UTILISATION\s+ETA\s+READY\s*$/);
    expect(lines[1]).toMatch(/^TallyIPPool\s+roomy\s+4\s+2\s+2\s+0\s+\[#####\.\.\.\.\.\]\s+50%\s+~1h\s+True\s*$/);
    expect(lines[2]).toMatch(/^TallyIPPool\s+tiny\s+1\s+1\s+0\s+0\s+\[##########\]\s+100%\s+exhausted\s+\S+\s*$/);
    expect(lines[3]).toBe('[exit 0]');
  });

  it('who: the holder of an address with its Machine and Cluster', async () => {
    const address = scene.addresses['web-0'] ?? '';
    const lines = (await screenOf('who', ['who', address])).split('\n');
    expect(lines[0]).toMatch(/^ADDRESS\s+NAMESPACE\s+CLAIM\s+IPADDRESS\s+POOL\s+HELD\s+MACHINE\s+CLUSTER\s*$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^${address.replace(/\./g, '\\.')}\\s+${scene.namespace}\\s+IPAddressClaim/web-0\\s+\\S+\\s+TallyIPPool/roomy\\s+\\S+\\s+m1\\s+c1\\s*$`,
      ),
    );
    expect(lines[2]).toBe('[exit 0]');
  });

  it('why: a waiting claim on one screen, from the verdict to the last event', async () => {
    const screen = await screenOf('why', ['why', 'solo-1', '-n', scene.namespace]);
    const lines = screen.split('\n');
    expect(lines[0]).toBe(`IPAddressClaim ${scene.namespace}/solo-1`);
    expect(lines[1]).toMatch(/^Waiting: PoolExhausted: /);
    expect(screen).toContain('\n  exhausted: yes');
    expect(screen).toMatch(/\n {2}last event: /);
    expect(screen).toMatch(/\n\[exit 0\]/);
  });

  it('leaks: an IPAddress whose claim is gone, with its age', async () => {
    await file.client.create(ADDRESS_RESOURCE, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddress',
      metadata: { name: 'stray', namespace: scene.namespace },
      spec: {
        address: '10.72.9.9',
        prefix: 24,
        claimRef: { name: 'vanished' },
        poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'gone' },
      },
    });
    const lines = (await screenOf('leaks', ['leaks', '-n', scene.namespace, '-o', 'wide', '--min-age', '0s'])).split(
      '\n',
    );
    expect(lines[0]).toMatch(/^KIND\s+NAMESPACE\s+NAME\s+ADDRESS\s+POOL\s+CLAIM\s+AGE\s+WHY\s*$/);
    expect(lines[1]).toMatch(
      /^IPAddress\s+\S+\s+stray\s+10\.72\.9\.9\s+TallyIPPool\/gone\s+vanished\s+\S+\s+claim vanished does not exist\s*$/,
    );
    expect(lines[2]).toBe('[exit 0]');
  });
});
