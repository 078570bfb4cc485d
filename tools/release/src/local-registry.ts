/**
 * A real npm registry on loopback for release tests: Verdaccio with its storage in a temporary directory, no uplink
 * (it serves only what was published to it and never asks another registry), and one user whose token the tests put
 * into a temporary npmrc. Nothing here ever names the public registry.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@tally-ipam/testenv';
import { stringify } from 'yaml';
import { z } from 'zod';

export interface LocalRegistry {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** A token of the registry's one user, for `//127.0.0.1:<port>/:_authToken`. */
  readonly token: string;
  readonly dir: string;
  /** The lines of an npmrc that send `scope`'s packages (or every package, without one) to this registry. */
  npmrcLines(scope?: string): string[];
  /** The registry's log so far (warnings and errors), for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;
const TokenResponse = z.object({ token: z.string().min(1) });

function verdaccioBin(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('verdaccio/package.json')), 'bin', 'verdaccio');
}

async function ping(url: string): Promise<boolean> {
  try {
    const response = await fetch(new URL('-/ping', url), { signal: AbortSignal.timeout(2_000) });
    return response.ok;
  } catch {
    return false;
  }
}

async function waitUntilServing(child: ChildProcess, url: string, log: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await ping(url))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`Verdaccio exited (${child.exitCode ?? child.signalCode}) before serving ${url}:\n${log()}`);
    }
    if (Date.now() > deadline)
      throw new Error(`Verdaccio did not answer ${url}-/ping in ${START_TIMEOUT_MS} ms:\n${log()}`);
    await sleep(200);
  }
}

/** Starts Verdaccio on 127.0.0.1 (a free port) and creates its one user. */
export async function startLocalRegistry(): Promise<LocalRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-registry-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  mkdirSync(join(dir, 'storage'));
  const configPath = join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    stringify({
      storage: join(dir, 'storage'),
      plugins: join(dir, 'plugins'),
      auth: { htpasswd: { file: join(dir, 'htpasswd'), max_users: 1 } },
      // No uplinks: a package not published here is a 404, never fetched from elsewhere.
      uplinks: {},
      packages: { '**': { access: '$authenticated', publish: '$authenticated', unpublish: '$authenticated' } },
      // The audit middleware forwards `npm audit` to the public registry; nothing here may talk to it.
      middlewares: { audit: { enabled: false } },
      web: { enable: false },
      publish: { allow_offline: true },
      log: { type: 'stdout', format: 'json', level: 'warn' },
    }),
  );
  let output = '';
  const child = spawn(process.execPath, [verdaccioBin(), '--config', configPath, '--listen', `127.0.0.1:${port}`], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilServing(child, url, () => output);
    const name = 'tally-release';
    const response = await fetch(new URL(`-/user/org.couchdb.user:${name}`, url), {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, password: `local-${port}-${Date.now()}` }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = await response.text();
    if (!response.ok)
      throw new Error(`creating the registry user failed with HTTP ${response.status}: ${body.slice(0, 300)}`);
    const { token } = TokenResponse.parse(JSON.parse(body));
    const authority = `//127.0.0.1:${port}/`;
    return {
      url,
      token,
      dir,
      npmrcLines: (scope) => [
        scope ? `${scope}:registry=${url}` : `registry=${url}`,
        `${authority}:_authToken=${token}`,
      ],
      log: () => output,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
