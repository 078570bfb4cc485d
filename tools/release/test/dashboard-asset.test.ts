import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GRAFANA_DASHBOARD, writeStandaloneAssets } from '../src/artifacts.js';
import { REPOSITORY_ROOT } from '../src/workspace.js';

const work = mkdtempSync(join(tmpdir(), 'tally-dashboard-asset-'));

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

const Dashboard = z.looseObject({
  title: z.string().min(1),
  uid: z.string().min(1),
  panels: z
    .array(
      z.looseObject({
        title: z.string().min(1),
        type: z.string(),
        targets: z.array(z.looseObject({ expr: z.string().min(1) })).optional(),
      }),
    )
    .min(1),
});

describe('release asset tally-ipam-dashboard.json', () => {
  it('is the committed Grafana dashboard byte for byte, with a query on every panel that is not a row', () => {
    const asset = writeStandaloneAssets(work).find((path) => basename(path) === GRAFANA_DASHBOARD);
    expect(asset, `writeStandaloneAssets wrote no ${GRAFANA_DASHBOARD}`).toBeDefined();
    const text = readFileSync(asset ?? '', 'utf8');
    const committed = readFileSync(join(REPOSITORY_ROOT, 'apps/ipam-controller/config/grafana', GRAFANA_DASHBOARD));
    expect(Buffer.from(text)).toEqual(committed);
    const dashboard = Dashboard.parse(JSON.parse(text));
    const withoutQuery = dashboard.panels
      .filter((panel) => panel.type !== 'row' && (panel.targets ?? []).length === 0)
      .map((panel) => panel.title);
    expect(withoutQuery).toEqual([]);
  });
});
