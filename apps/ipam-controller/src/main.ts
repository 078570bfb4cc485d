#!/usr/bin/env node
import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import {
  createLogger,
  FlagError,
  loadKubeConfig,
  resolveKubeConfigSource,
  SERVICE_ACCOUNT_DIR,
  setupSignalHandler,
} from '@tally-ipam/controller-kit';
import { type AppFlags, appUsage, parseAppFlags } from './app-flags.js';
import { runDemo } from './demo/run-demo.js';
import { buildController, MANAGER_NAME } from './run-controller.js';

/**
 * A cluster was named explicitly: `--kubeconfig`, `$KUBECONFIG` or the pod's service account. `~/.kube/config` alone
 * does not count, so `npm start` on a workstation never acts on whatever cluster kubectl happens to point at.
 */
function clusterGiven(flags: AppFlags): boolean {
  try {
    const source = resolveKubeConfigSource(flags.manager.kubeconfig, {
      env: process.env,
      homeDir: homedir(),
      serviceAccountDir: SERVICE_ACCOUNT_DIR,
      exists: existsSync,
    });
    return !(source.kind === 'file' && source.from === 'home');
  } catch {
    return false;
  }
}

async function runAgainstCluster(flags: AppFlags): Promise<number> {
  const logger = createLogger({ name: MANAGER_NAME, level: flags.manager.logLevel });
  const signal = setupSignalHandler(logger);
  // Each informer and controller listens on this signal; the default limit of 10 listeners would warn.
  setMaxListeners(100, signal);
  try {
    const { manager } = buildController({ kubeConfig: loadKubeConfig(flags.manager.kubeconfig), flags, logger });
    await manager.start(signal);
    logger.info('stopped');
    return 0;
  } catch (error) {
    logger.error({ err: error }, 'manager failed');
    return 1;
  }
}

async function main(): Promise<number> {
  let flags: AppFlags;
  try {
    flags = parseAppFlags(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    process.stderr.write(`${error.message}\n\n${appUsage()}\n`);
    return 2;
  }
  if (flags.help) {
    process.stdout.write(`${appUsage()}\n`);
    return 0;
  }
  if (clusterGiven(flags)) return runAgainstCluster(flags);
  const signal = setupSignalHandler();
  try {
    return await runDemo(flags, signal, (line) => process.stdout.write(`${line}\n`));
  } catch (error) {
    process.stderr.write(`demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}

// Exit explicitly: the exit code is the contract with the kubelet (0 after a clean stop, non-zero to be restarted).
process.exit(await main());
