import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, inject, it } from 'vitest';
import { FIELD_MANAGER } from './support/environment.js';
import { type ExampleRun, runPage, yamlBlocks } from './support/examples.js';
import { guidePages } from './support/guide.js';
import { Kube } from './support/kube.js';

/**
 * Every Kubernetes object of the guide applied, page by page in file-name order and block by block in reading order,
 * to the project's API server with the controller running; every excerpt the guide prints of an object (```yaml
 * expect) must then be what the API server shows (waited for: the controller acts asynchronously), every refusal it
 * prints (```yaml refused) must be the API server's answer.
 */
describe('the guide, followed on a real API server with the IPAM controller running', () => {
  // A page without Kubernetes objects (the install page's clusterctl configuration) is checked by clusterctl.test.ts.
  const pages = guidePages().filter((page) => yamlBlocks(page).some((block) => block.type !== 'clusterctl'));
  it('the guide has pages with objects', () => {
    expect(pages.length).toBeGreaterThan(0);
  });
  for (const page of pages) {
    it(`${page.path}: its objects reach the states it shows`, async () => {
      const run: ExampleRun = {
        kube: new Kube(testEnv().kubeConfig),
        fieldManager: FIELD_MANAGER,
        timeoutMs: 180_000,
        hint: `the controller log ${inject('tallyGuide').controllerLog}`,
      };
      const done = await runPage(page, run);
      // Every object and excerpt of the page was acted on, none passed over.
      const entries = yamlBlocks(page);
      const count = (type: string, refused: boolean): number =>
        entries
          .filter((entry) => entry.type === type && entry.block.flags.includes('refused') === refused)
          .reduce((sum, entry) => sum + (entry.type === 'clusterctl' ? 0 : entry.objects.length), 0);
      expect(done.applied).toBe(count('objects', false));
      expect(done.refusals).toBe(count('objects', true));
      expect(done.excerpts).toBe(count('expect', false));
      expect(done.applied).toBeGreaterThan(0);
      console.log(
        `${page.path}: ${done.applied} objects applied, ${done.excerpts} excerpts reached, ` +
          `${done.refusals} refusals met, ${done.commands} kubectl commands run`,
      );
    });
  }
});
