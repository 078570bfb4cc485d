import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, inject, it } from 'vitest';
import { guidePage, REPOSITORY_ROOT } from './support/guide.js';
import { Kube } from './support/kube.js';
import { metricsReaderToken, type ServedMetric, scrape, servedMetrics } from './support/metrics.js';

/**
 * docs/guide/metrics.md lists exactly the metrics the running controller serves (the shipped Deployment's arguments,
 * the Metal3 API on), each with its type and help text, between its generated markers. A metric registered, renamed
 * or retyped in controller-kit or the IPAM provider fails this until the page is rewritten
 * (`TALLY_DOCS_WRITE=metrics`).
 */

const PAGE = 'docs/guide/metrics.md';
const START = '<!-- generated:metrics:start -->';
const END = '<!-- generated:metrics:end -->';
/** Node's process and runtime series, when a process registers them, are not Tally's to document. */
const RUNTIME_PREFIXES = ['process_', 'nodejs_'];

function renderTable(metrics: readonly ServedMetric[]): string {
  const rows = [...metrics]
    .filter((metric) => !RUNTIME_PREFIXES.some((prefix) => metric.name.startsWith(prefix)))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((metric) => `| \`${metric.name}\` | ${metric.type} | ${metric.help.replaceAll('|', '\\|')} |`);
  return ['| metric | type | help |', '|---|---|---|', ...rows].join('\n');
}

function withTable(text: string, table: string): string {
  const from = text.indexOf(START);
  const to = text.indexOf(END);
  if (from === -1 || to < from) throw new Error(`${PAGE}: no ${START} … ${END} section`);
  return `${text.slice(0, from + START.length)}\n${table}\n${text.slice(to)}`;
}

describe('the metrics reference', () => {
  it('lists exactly what the controller serves, with type and help', async () => {
    const token = await metricsReaderToken(new Kube(testEnv().kubeConfig), guidePage('operating.md'));
    const scraped = await scrape(inject('tallyGuide').diagnosticsPort, token);
    expect(scraped.status, scraped.body.slice(0, 200)).toBe(200);
    const metrics = servedMetrics(scraped.body);
    expect(metrics.some((metric) => metric.name.startsWith('tally_ipam_'))).toBe(true);
    const path = join(REPOSITORY_ROOT, PAGE);
    const text = readFileSync(path, 'utf8');
    const expected = withTable(text, renderTable(metrics));
    if (process.env.TALLY_DOCS_WRITE === 'metrics' && expected !== text) writeFileSync(path, expected);
    else expect(text, `${PAGE} differs from the served metrics (TALLY_DOCS_WRITE=metrics rewrites it)`).toBe(expected);
  });
});
