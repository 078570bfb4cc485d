// The kind lane runs vitest a second time in e2e/: its report must not replace or hide e2e's own.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adoptMisplacedReport } from '../../../scripts/test-summary.mjs';

const work = mkdtempSync(join(tmpdir(), 'tally-adopt-report-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function paths(name: string): { sharedReport: string; laneReport: string } {
  const dir = join(work, name);
  mkdirSync(join(dir, 'kind'), { recursive: true });
  return { sharedReport: join(dir, 'test-results.json'), laneReport: join(dir, 'kind', 'test-results.json') };
}

describe('adoptMisplacedReport', () => {
  it("moves the lane's report written over e2e's to the lane's place and puts e2e's back", () => {
    const { sharedReport, laneReport } = paths('over');
    writeFileSync(sharedReport, '{"e2e":true}');
    const sharedBefore = readFileSync(sharedReport);
    writeFileSync(sharedReport, '{"lane":true}');
    expect(adoptMisplacedReport({ sharedReport, laneReport, sharedBefore })).toBe(true);
    expect(readFileSync(laneReport, 'utf8')).toBe('{"lane":true}');
    expect(readFileSync(sharedReport, 'utf8')).toBe('{"e2e":true}');
  });

  it("moves it when e2e wrote no report, leaving e2e's missing (so it counts as failed)", () => {
    const { sharedReport, laneReport } = paths('alone');
    writeFileSync(sharedReport, '{"lane":true}');
    expect(adoptMisplacedReport({ sharedReport, laneReport, sharedBefore: undefined })).toBe(true);
    expect(readFileSync(laneReport, 'utf8')).toBe('{"lane":true}');
    expect(existsSync(sharedReport)).toBe(false);
  });

  it('touches nothing when the lane wrote its own report, or wrote none', () => {
    const own = paths('own');
    writeFileSync(own.sharedReport, '{"e2e":true}');
    writeFileSync(own.laneReport, '{"lane":true}');
    expect(adoptMisplacedReport({ ...own, sharedBefore: readFileSync(own.sharedReport) })).toBe(false);
    expect(readFileSync(own.sharedReport, 'utf8')).toBe('{"e2e":true}');

    const none = paths('none');
    writeFileSync(none.sharedReport, '{"e2e":true}');
    expect(adoptMisplacedReport({ ...none, sharedBefore: readFileSync(none.sharedReport) })).toBe(false);
    expect(existsSync(none.laneReport)).toBe(false);
    expect(readFileSync(none.sharedReport, 'utf8')).toBe('{"e2e":true}');
  });
});
