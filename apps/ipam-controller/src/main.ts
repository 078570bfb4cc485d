#!/usr/bin/env node
import { controllerFlagsUsage, EXIT_BAD_FLAGS, FlagError, runControllerApp } from '@tally-ipam/controller-kit';
import { type AppOwnFlags, IPAM_CONTROLLER_APP, takeAppOwnFlags } from './app-flags.js';
import { loadDemo } from './demo-loader.js';
import { parentStopRequest } from './parent-stop.js';
import { ipamControllerSetup } from './run-controller.js';

/** `--enable-metal3-ipam` and `--enable-in-cluster-ipam` are the app's own flags: taken off before the kit parses the rest. */
function ownFlags(): AppOwnFlags | undefined {
  try {
    return takeAppOwnFlags(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    process.stderr.write(`${error.message}\n\n${controllerFlagsUsage(IPAM_CONTROLLER_APP)}\n`);
    return undefined;
  }
}
const own = ownFlags();
if (!own) process.exit(EXIT_BAD_FLAGS);

// Exit explicitly: the exit code is the contract with the kubelet (0 after a clean stop, non-zero to be restarted).
process.exit(
  await runControllerApp({
    app: IPAM_CONTROLLER_APP,
    argv: own.rest,
    setup: ipamControllerSetup({ enableMetal3: own.enableMetal3, enableInCluster: own.enableInCluster }),
    // npm start's script passes on a SIGTERM/SIGINT sent to npm (or to itself) as a request over IPC.
    stopRequest: parentStopRequest(),
    // `npm start` on a workstation runs the demo on an embedded control plane rather than act on kubectl's cluster.
    withoutExplicitCluster: async (flags, signal) =>
      (await loadDemo()).runDemo(flags, signal, (line) => process.stdout.write(`${line}\n`)),
  }),
);
