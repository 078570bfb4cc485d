import type { Logger } from 'pino';

/**
 * An AbortSignal that aborts on the first SIGTERM or SIGINT, starting a graceful stop; a second signal exits at once
 * with code 1 (controller-runtime's SetupSignalHandler). Call once per process.
 */
export function setupSignalHandler(logger?: Logger): AbortSignal {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      logger?.warn({ signal }, 'second signal received, exiting immediately');
      process.exit(1);
    }
    logger?.info({ signal }, 'signal received, shutting down gracefully');
    controller.abort(new Error(`received ${signal}`));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return controller.signal;
}
