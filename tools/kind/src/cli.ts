#!/usr/bin/env node
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatDuration } from '@tally-ipam/testenv';
import { ensureKindBinaries } from './binaries.js';
import { CLUSTER_NAME_PATTERN, createKindCluster } from './cluster.js';
import { ensureDockerEngine } from './docker.js';
import { run } from './exec.js';
import { kindCacheDir } from './paths.js';
import { prepareKind } from './prepare.js';

const USAGE = `usage: tally-kind <command> [--name NAME]

  binaries  build (or find in the cache) kind, kubectl and the node's Kubernetes binaries; no Docker engine needed
  prepare   build (or find in the cache) kind, kubectl, the node image and the Cluster API manager image archive
  create    prepare, then create a kind cluster (default name: tally) and print its kubeconfig path; the cluster
            stays until "tally-kind delete"
  delete    delete the cluster (node containers, their volumes, its network)
  status    whether a Docker engine answers, what the cache holds, which kind clusters exist

  --name NAME  the cluster create and delete act on (default: tally)
  -h, --help   this text

environment: TALLY_CACHE_DIR (cache root), TALLY_DEBIAN_MIRROR (debootstrap mirror)`;

const log = (message: string): void => {
  console.error(`[tally-kind] ${message}`);
};

function nameArgument(args: readonly string[]): string {
  const index = args.indexOf('--name');
  if (index === -1) return 'tally';
  const value = args[index + 1];
  if (!value) throw new Error('--name needs a value');
  if (!CLUSTER_NAME_PATTERN.test(value)) {
    throw new Error(`--name "${value.slice(0, 50)}" must be 1-40 lowercase letters, digits or dashes`);
  }
  return value;
}

async function requireEngine(): Promise<void> {
  if (!(await ensureDockerEngine())) {
    throw new Error('no Docker engine answers "docker info" (on CI: .ci/docker-engine.sh start)');
  }
}

async function main(args: readonly string[]): Promise<void> {
  const command = args[0];
  switch (command) {
    case 'binaries': {
      // npm test's prepare stage: tools/docs checks the guide's kubectl lines against this kubectl's --help, with or
      // without a Docker engine, and a cold build of it must not fall inside a test's timeout.
      const started = Date.now();
      const kind = await ensureKindBinaries(log);
      log(`binaries ready in ${formatDuration(Date.now() - started)}`);
      console.log(JSON.stringify(kind.paths, null, 2));
      return;
    }
    case 'prepare': {
      await requireEngine();
      const started = Date.now();
      const prepared = await prepareKind({ onProgress: log });
      log(`prepared in ${formatDuration(Date.now() - started)}`);
      console.log(JSON.stringify(prepared, null, 2));
      return;
    }
    case 'create': {
      await requireEngine();
      const prepared = await prepareKind({ onProgress: log });
      const cluster = await createKindCluster({
        name: nameArgument(args),
        nodeImage: prepared.nodeImage,
        kindBinary: prepared.kindBinary,
        onProgress: log,
      });
      // The command as the reader can type it where they are: `tally-kind` is on no PATH outside the workspace's bins.
      log(
        `delete it with: node ${relative(process.cwd(), fileURLToPath(import.meta.url))} delete --name ${cluster.name}`,
      );
      console.log(`export KUBECONFIG=${cluster.kubeconfigPath}`);
      return;
    }
    case 'delete': {
      const name = nameArgument(args);
      const kind = await ensureKindBinaries(log);
      const network = `tally-kind-${name}`;
      await run(kind.paths.kind, ['delete', 'cluster', '--name', name], {
        env: { ...process.env, KIND_EXPERIMENTAL_DOCKER_NETWORK: network },
      });
      const inspect = await run('docker', ['network', 'ls', '--quiet', '--filter', `name=^${network}$`]);
      if (inspect.trim()) await run('docker', ['network', 'rm', network]);
      // createKindCluster keeps the kubeconfig in a temporary directory named after the cluster.
      // (mkdtemp's suffix is six characters, so a cluster named "<name>-x" keeps its own directory.)
      const ownDir = new RegExp(`^tally-kind-${name}-[A-Za-z0-9]{6}$`);
      for (const entry of await readdir(tmpdir())) {
        if (ownDir.test(entry)) await rm(join(tmpdir(), entry), { recursive: true, force: true });
      }
      log(`deleted kind cluster ${name} and network ${network}`);
      return;
    }
    case 'status': {
      const engine = await ensureDockerEngine();
      log(`Docker engine: ${engine ? 'answers' : 'none answers'}`);
      for (const entry of ['binaries', 'node-image', 'capi-image']) {
        const names = await readdir(join(kindCacheDir(), entry)).catch(() => [] as string[]);
        log(`cache ${entry}: ${names.filter((n) => !n.includes('.')).join(', ') || '(empty)'}`);
      }
      if (engine) {
        const kind = await ensureKindBinaries(log);
        log(`kind clusters: ${(await run(kind.paths.kind, ['get', 'clusters'])).trim() || '(none)'}`);
      }
      return;
    }
    default:
      console.error(USAGE);
      process.exitCode = command === undefined || command === '--help' || command === '-h' ? 0 : 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  log(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
