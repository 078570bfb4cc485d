import {
  IPADDRESSCLAIM_ADDRESS_ALLOCATED_REASON,
  IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
  IPADDRESSCLAIM_POOL_EXHAUSTED_REASON,
  IPADDRESSCLAIM_POOL_NOT_READY_REASON,
  POOL_DELETING_REASON,
  POOL_EXHAUSTED_REASON,
  POOL_INVALID_SPEC_REASON,
  POOL_READY_REASON,
} from '@tally-ipam/api-types';
import {
  CLAIM_ADDRESS_RESERVED_REASON,
  EVENT_ADDRESS_ALLOCATED,
  EVENT_ADDRESS_RECREATED,
  EVENT_ADDRESS_RELEASED,
  EVENT_ADDRESSES_ALLOCATED,
  EVENT_ALLOCATION_FAILED,
  EVENT_DUPLICATE_ADDRESS,
  EVENT_POOL_EXHAUSTED,
  POOL_MOVED_AWAY_REASON,
} from '@tally-ipam/ipam-provider';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, inject, it } from 'vitest';
import { componentNames, readComponents, roleRules } from './support/components.js';
import { guidePage, guidePages } from './support/guide.js';
import { Kube } from './support/kube.js';
import { codeOf, tableWithHeader } from './support/markdown.js';
import { metricsReaderToken, scrape } from './support/metrics.js';

/**
 * What the guide names that the code defines: every reason and Event reason Tally sets (from the constants the
 * controllers use), the metrics the running controller serves (scraped as the operating page tells Prometheus to),
 * the objects the components ship, and the permissions the operating page says the controller lacks.
 */

function firstColumn(rows: readonly (readonly string[])[]): string[] {
  return rows.flatMap((row) => codeOf(row[0] ?? ''));
}

describe('the troubleshooting page names every reason Tally sets', () => {
  const page = guidePage('troubleshooting.md');

  it('on claims: each Ready reason once, True only for AddressAllocated', () => {
    const table = tableWithHeader(page, 'reason', 'Ready', 'means', 'do');
    expect(firstColumn(table.rows).sort()).toEqual(
      [
        IPADDRESSCLAIM_ADDRESS_ALLOCATED_REASON,
        IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
        IPADDRESSCLAIM_POOL_EXHAUSTED_REASON,
        IPADDRESSCLAIM_POOL_NOT_READY_REASON,
        CLAIM_ADDRESS_RESERVED_REASON,
      ].sort(),
    );
    for (const row of table.rows) {
      const ready = codeOf(row[0] ?? '')[0] === IPADDRESSCLAIM_ADDRESS_ALLOCATED_REASON ? 'True' : 'False';
      expect(codeOf(row[1] ?? ''), row[0]).toEqual([ready]);
    }
  });

  it('on pools', () => {
    const tables = page.tables.filter((candidate) => candidate.header.join('|').toLowerCase() === 'reason|ready|means');
    expect(tables.length, '| reason | Ready | means | tables').toBe(1);
    const table = tables[0] as (typeof tables)[number];
    expect(firstColumn(table.rows).sort()).toEqual(
      [POOL_READY_REASON, POOL_EXHAUSTED_REASON, POOL_INVALID_SPEC_REASON, POOL_DELETING_REASON].sort(),
    );
  });

  it('in Events', () => {
    const table = tableWithHeader(page, 'reason', 'on', 'type', 'when');
    const named = new Set(firstColumn(table.rows));
    const recorded = [
      EVENT_ADDRESS_ALLOCATED,
      EVENT_ADDRESS_RECREATED,
      EVENT_ADDRESS_RELEASED,
      EVENT_ADDRESSES_ALLOCATED,
      EVENT_ALLOCATION_FAILED,
      EVENT_DUPLICATE_ADDRESS,
      EVENT_POOL_EXHAUSTED,
      POOL_MOVED_AWAY_REASON,
      // A pool records a Warning with the reason its Ready condition turns False with.
      POOL_EXHAUSTED_REASON,
      POOL_INVALID_SPEC_REASON,
      POOL_DELETING_REASON,
    ];
    expect([...named].sort()).toEqual([...new Set(recorded)].sort());
  });
});

describe('the operating page: metrics, as Prometheus would scrape them', () => {
  const page = guidePage('operating.md');

  it("the page's ServiceAccount, bound to tally-ipam-metrics-reader, reads every metric the page names", async () => {
    const token = await metricsReaderToken(new Kube(testEnv().kubeConfig), page);
    const port = inject('tallyGuide').diagnosticsPort;

    expect((await scrape(port)).status, 'without a token').toBe(401);
    const scraped = await scrape(port, token);
    expect(scraped.status, scraped.body.slice(0, 200)).toBe(200);
    const served = new Set(
      scraped.body
        .split('\n')
        .filter((line) => line.startsWith('# TYPE '))
        .map((line) => line.split(' ')[2] ?? ''),
    );
    const table = tableWithHeader(page, 'metric', 'type', 'labels', 'what');
    // Tally's own metrics: the table lists each one served, with its type.
    const ownServed = [...served].filter((name) => name.startsWith('tally_ipam_')).sort();
    expect(firstColumn(table.rows).sort()).toEqual(ownServed);
    for (const row of table.rows) {
      const name = codeOf(row[0] ?? '')[0] ?? '';
      expect(scraped.body, name).toContain(`# TYPE ${name} ${codeOf(row[1] ?? '')[0] ?? row[1]}`);
    }
    // The controller-runtime names the prose lists are served too.
    const named = page.inlineCode
      .map((code) => code.text)
      .filter((text) => /^(controller_runtime|workqueue)_[a-z_]+$/.test(text));
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) expect(served, name).toContain(name);
  });
});

describe("the guide's names of shipped objects", () => {
  it('every tally-ipam-… name the guide uses is an object of the components (or the Lease)', () => {
    const components = readComponents(inject('tallyGuide').componentsPath);
    const known = componentNames(components);
    // The Lease is created at run time, named by --leader-election-id's default.
    known.add('tally-ipam-controller-leader-election');
    const used = new Set(
      guidePages().flatMap((page) => [...page.text.matchAll(/tally-ipam-[a-z0-9-]*[a-z0-9]/g)].map((m) => m[0])),
    );
    expect(used.size).toBeGreaterThan(0);
    for (const name of used) expect(known, name).toContain(name);
  });

  it('the manager role grants nothing on Secrets or ConfigMaps, and cannot create or delete claims or pools', () => {
    const components = readComponents(inject('tallyGuide').componentsPath);
    const rules = roleRules(components, 'ClusterRole', 'tally-ipam-manager-role');
    const resources = rules.flatMap((rule) => rule.resources ?? []);
    expect(resources).not.toContain('secrets');
    expect(resources).not.toContain('configmaps');
    const guarded = [
      'ipaddressclaims',
      'tallyippools',
      'globaltallyippools',
      'tallyprefixpools',
      'globaltallyprefixpools',
    ];
    for (const rule of rules) {
      if (!(rule.resources ?? []).some((resource) => guarded.includes(resource))) continue;
      expect(rule.verbs, JSON.stringify(rule)).not.toContain('create');
      expect(rule.verbs, JSON.stringify(rule)).not.toContain('delete');
      expect(rule.verbs, JSON.stringify(rule)).not.toContain('*');
    }
  });
});
