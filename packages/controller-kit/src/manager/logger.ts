import { type DestinationStream, destination, type Logger, pino } from 'pino';
import type { LoggingFormat, LogLevel } from './flags.js';

export interface CreateLoggerOptions {
  readonly name: string;
  readonly level?: LogLevel;
  /** `json` (default): one JSON object per line. `text`: klog-like `time LEVEL msg key=value …` lines for people. */
  readonly format?: LoggingFormat;
  /** Where lines go; process stdout by default. */
  readonly destination?: { write(line: string): unknown };
}

/**
 * The process logger: JSON lines on stdout, written synchronously (no transport threads), `err` serialized with its
 * stack, ISO timestamps, the level as a label. The process name goes under `logger`, not pino's `name`, because
 * controllers log the reconciled object as `namespace`/`name` (controller-runtime's keys) and the two would collide.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const settings = {
    base: { pid: process.pid, logger: options.name },
    level: options.level ?? 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const out = options.destination ?? process.stdout;
  if ((options.format ?? 'json') === 'json') {
    // Written synchronously, as Go controllers' logs are: pino's default stream holds every line logged while its
    // previous write is pending until the event loop is free again (a second and more behind under start-up work),
    // and loses what it holds when the process is killed.
    return pino(
      settings,
      (options.destination as DestinationStream | undefined) ?? destination({ dest: 1, sync: true }),
    );
  }
  // pino itself only writes JSON; pino-pretty would be a dependency tree and a worker thread for a few lines of
  // formatting, so text is rendered here from each JSON line, synchronously.
  return pino(settings, { write: (line: string) => out.write(`${textLine(line)}\n`) });
}

const TEXT_OMITTED = new Set(['time', 'level', 'msg', 'pid', 'logger']);

/** `2026-11-24T10:00:00.000Z INFO  message key=value key="with space"` from one pino JSON line. */
export function textLine(jsonLine: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.trimEnd();
  }
  const level = String(record.level ?? '')
    .toUpperCase()
    .padEnd(5);
  const fields = Object.entries(record)
    .filter(([key]) => !TEXT_OMITTED.has(key))
    .map(([key, value]) => `${key}=${textValue(key, value)}`);
  return [String(record.time ?? ''), level, String(record.msg ?? ''), ...fields].join(' ').trimEnd();
}

function textValue(key: string, value: unknown): string {
  if (key === 'err' && typeof value === 'object' && value !== null) {
    const error = value as { message?: unknown; stack?: unknown };
    return JSON.stringify(String(error.stack ?? error.message ?? ''));
  }
  if (typeof value === 'string') return /^[\w./:@-]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? 'undefined';
}
