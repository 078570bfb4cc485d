#!/usr/bin/env node
import { createLogger, FlagError, loadKubeConfig, setupSignalHandler } from '@tally-ipam/controller-kit';
import { type AppFlags, appUsage, parseAppFlags } from './app-flags.js';
import { buildController, MANAGER_NAME } from './run-controller.js';

async function run(flags: AppFlags): Promise<number> {
  const logger = createLogger({ name: MANAGER_NAME, level: flags.manager.logLevel });
  const signal = setupSignalHandler(logger);
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
  return run(flags);
}

// Exit explicitly: the exit code is the contract with the kubelet (0 after a clean stop, non-zero to be restarted).
process.exit(await main());
