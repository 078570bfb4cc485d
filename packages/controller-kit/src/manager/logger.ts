import { type Logger, pino } from 'pino';
import type { LogLevel } from './flags.js';

/**
 * The process logger: JSON lines on stdout (no transport threads), `err` serialized with its stack, ISO timestamps.
 * Controllers derive children with `logger.child({ controller, namespace, name, reconcileID })`.
 */
export function createLogger(options: { readonly name: string; readonly level?: LogLevel }): Logger {
  return pino({
    name: options.name,
    level: options.level ?? 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
