import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startWatchedProcess } from '../src/watched-process.js';
import { eventually, isAlive, processesMentioning } from './helpers.js';

describe('startWatchedProcess', () => {
  it('runs a helper process with its output in a log, and stop() kills it and removes its directory', async () => {
    const helper = startWatchedProcess({
      name: 'echo-helper',
      command: process.execPath,
      // The state directory is an argument only so the watchdog recognises the process.
      args: (stateDir) => ['-e', 'console.log("helper up"); setInterval(() => {}, 60_000);', stateDir],
    });
    try {
      await eventually('the helper to print', () => readFileSync(helper.logPath, 'utf8').includes('helper up'));
      expect(isAlive(helper.pid)).toBe(true);
      expect(processesMentioning(helper.stateDir)).toContain(helper.pid);
      expect(helper.exit()).toBeUndefined();
    } finally {
      await helper.stop();
    }
    expect(isAlive(helper.pid)).toBe(false);
    expect((await helper.exited).signal).toBe('SIGKILL');
    expect(existsSync(helper.stateDir)).toBe(false);
  });

  it('refuses arguments that do not name the state directory (the watchdog could not recognise the process)', () => {
    let offered = '';
    expect(() =>
      startWatchedProcess({
        name: 'anonymous',
        command: process.execPath,
        args: (stateDir) => {
          offered = stateDir;
          return ['-e', '0'];
        },
      }),
    ).toThrow(/no argument mentions the state directory .*tally-anonymous-/);
    expect(offered).not.toBe('');
    expect(existsSync(offered)).toBe(false);
  });
});
