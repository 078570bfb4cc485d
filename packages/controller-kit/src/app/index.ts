// A controller executable's main: flags, kubeconfig, manager, webhook server, exit codes; the app adds its provider.
export {
  buildControllerManager,
  type ControllerAppContext,
  type ControllerAppOptions,
  type ControllerAppSetup,
  type ControllerManager,
  type ControllerManagerOptions,
  EXIT_BAD_FLAGS,
  EXIT_FAILED,
  EXIT_OK,
  runControllerApp,
} from './controller-app.js';
export {
  type ControllerAppIdentity,
  type ControllerFlags,
  controllerFlagsUsage,
  parseControllerFlags,
} from './controller-flags.js';
export { readPackageVersion } from './package-version.js';
