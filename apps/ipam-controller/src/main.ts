#!/usr/bin/env node
import { runControllerApp } from '@tally-ipam/controller-kit';
import { IPAM_CONTROLLER_APP } from './app-flags.js';
import { loadDemo } from './demo-loader.js';
import { setupIPAMController } from './run-controller.js';

// Exit explicitly: the exit code is the contract with the kubelet (0 after a clean stop, non-zero to be restarted).
process.exit(
  await runControllerApp({
    app: IPAM_CONTROLLER_APP,
    setup: setupIPAMController,
    // `npm start` on a workstation runs the demo on an embedded control plane rather than act on kubectl's cluster.
    withoutExplicitCluster: async (flags, signal) =>
      (await loadDemo()).runDemo(flags, signal, (line) => process.stdout.write(`${line}\n`)),
  }),
);
