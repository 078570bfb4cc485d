import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogLevel } from '@tally-ipam/controller-kit';
import { type Logger, pino } from 'pino';

export interface DemoLogger {
  readonly logger: Logger;
  /** The file the controller's JSON log lines go to (kept after the demo stops, for reading afterwards). */
  readonly path: string;
  flush(): void;
}

/**
 * The controller's log in the demo: the same JSON lines as in a cluster (the kit's format), written to a file so the
 * terminal shows the demo's own story — progress and the claims table — rather than thousands of log lines.
 */
export function createDemoLogger(name: string, level: LogLevel): DemoLogger {
  const path = join(mkdtempSync(join(tmpdir(), 'tally-ipam-demo-')), 'controller.log');
  const destination = pino.destination({ dest: path, sync: false, mkdir: true });
  const logger = pino(
    {
      base: { pid: process.pid, logger: name },
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  return { logger, path, flush: () => destination.flushSync() };
}
