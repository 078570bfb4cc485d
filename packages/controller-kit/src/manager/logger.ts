import { type Logger, pino } from 'pino';
import type { LogLevel } from './flags.js';

/**
 * The process logger: JSON lines on stdout (no transport threads), `err` serialized with its stack, ISO timestamps,
 * the level as a label. The process name goes under `logger`, not pino's `name`, because controllers log the
 * reconciled object as `namespace`/`name` (controller-runtime's keys) and the two would collide.
 */
export function createLogger(options: { readonly name: string; readonly level?: LogLevel }): Logger {
  return pino({
    base: { pid: process.pid, logger: options.name },
    level: options.level ?? 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
