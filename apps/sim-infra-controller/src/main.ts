#!/usr/bin/env node
import { runControllerApp } from '@tally-ipam/controller-kit/app';
import { SIM_INFRA_CONTROLLER_APP } from './app-flags.js';
import { setupSimInfraController } from './run-controller.js';

// Exit explicitly: the exit code is the contract with the kubelet (0 after a clean stop, non-zero to be restarted).
process.exit(await runControllerApp({ app: SIM_INFRA_CONTROLLER_APP, setup: setupSimInfraController }));
