import { describe, expect, it } from 'vitest';
import { healthProbePort, ImageControllerExitedError } from '../src/cluster.js';

const line = (record: object): string => JSON.stringify(record);

describe('reading a started image controller', () => {
  it('finds the health probe port in the log, among other lines and a line still cut by the pipe', () => {
    const log = [
      'not json',
      line({ level: 30, msg: 'serving metrics', address: '127.0.0.1:40001' }),
      line({ level: 30, msg: 'serving health probes', address: '127.0.0.1:40123' }),
      '{"level":30,"msg":"serving webh',
    ].join('\n');
    expect(healthProbePort(log)).toBe(40123);
  });

  it('finds no port before the line is complete, or when the address is not a string', () => {
    expect(healthProbePort('{"level":30,"msg":"serving health probes","address":"127.0.0.1:4')).toBeUndefined();
    expect(healthProbePort(line({ msg: 'serving health probes', address: 40123 }))).toBeUndefined();
    expect(healthProbePort('')).toBeUndefined();
  });

  it('names the exit code or signal and keeps the output, or says there was none', () => {
    const byCode = new ImageControllerExitedError(1, null, 'listen EADDRINUSE: address already in use');
    expect(byCode.message).toBe(
      "the image's entrypoint exited (code 1) before it was ready:\nlisten EADDRINUSE: address already in use",
    );
    expect(byCode.output).toContain('EADDRINUSE');
    expect(new ImageControllerExitedError(null, 'SIGKILL', '').message).toBe(
      "the image's entrypoint exited (signal SIGKILL) before it was ready:\n(it wrote nothing)",
    );
  });
});
