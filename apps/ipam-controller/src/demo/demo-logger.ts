import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogLevel } from '@tally-ipam/controller-kit';
import { type DestinationStream, type Logger, pino } from 'pino';

export interface DemoLogger {
  readonly logger: Logger;
  /** The file the controller's log lines go to (kept after the demo stops, for reading afterwards). */
  readonly path: string;
  flush(): void;
}

/** Fields every line has, shown in the line's head rather than repeated as `key=value`. */
const HEAD_FIELDS = new Set(['time', 'level', 'msg', 'logger', 'pid', 'hostname']);
const MAX_VALUE_CHARS = 200;

function formatValue(value: unknown): string {
  const text =
    typeof value === 'string' ? (/[\s"=]/.test(value) ? JSON.stringify(value) : value) : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/**
 * One pino JSON line as a person reads it: `12:03:04.567 INFO  <logger> <message> key=value …`, an error's stack on
 * the lines below. Anything that is not a JSON object is kept as it came.
 */
export function formatLogLine(line: string): string {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return line.trimEnd();
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return line.trimEnd();
  const fields = record as Record<string, unknown>;
  const time = typeof fields.time === 'string' ? fields.time.slice(11, 23) : '';
  const level = String(fields.level ?? '').toUpperCase();
  const rest = Object.entries(fields).filter(([key]) => !HEAD_FIELDS.has(key) && key !== 'err');
  const head = [time, level.padEnd(5), String(fields.logger ?? ''), String(fields.msg ?? '')].filter(Boolean);
  const text = [...head, ...rest.map(([key, value]) => `${key}=${formatValue(value)}`)].join(' ');
  const err = fields.err;
  const stack =
    typeof err === 'object' && err !== null && 'stack' in err && typeof err.stack === 'string'
      ? `\n    ${err.stack.split('\n').join('\n    ')}`
      : '';
  return `${text}${stack}`;
}

/**
 * The controller's log in the demo, written to a file so the terminal shows the demo's own story — progress and the
 * claims table — rather than thousands of log lines, and formatted for reading (`formatLogLine`) rather than as the
 * JSON lines a cluster's log collector wants.
 */
export function createDemoLogger(name: string, level: LogLevel): DemoLogger {
  const path = join(mkdtempSync(join(tmpdir(), 'tally-ipam-demo-')), 'controller.log');
  // Synchronous appends: the demo logs little, and nothing is lost when it stops.
  const destination: DestinationStream = {
    write: (line: string) => appendFileSync(path, `${formatLogLine(line)}\n`),
  };
  const logger = pino(
    {
      base: { logger: name },
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  return { logger, path, flush: () => {} };
}
