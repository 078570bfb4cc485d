import { waitFor } from '@tally-ipam/testenv';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { at } from './guide.js';
import { ApiError, type Kube, type KubeObject } from './kube.js';
import type { CodeBlock, Page } from './markdown.js';
import { excerptMismatches } from './subset.js';

/**
 * The guide's YAML, block by block: Kubernetes objects to apply (```yaml), excerpts of objects as the API server
 * shows them once Tally has acted (```yaml expect), and clusterctl configuration (no apiVersion/kind: `providers`,
 * `images`, variables). A block that is none of these fails: the guide has no YAML a test does not look at.
 */

const ObjectDocument = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({ name: z.string().min(1).optional(), namespace: z.string().min(1).optional() }),
});

/** clusterctl's configuration file keys the guide uses; a variable is any upper-case key. */
const ClusterctlDocument = z.record(z.string().regex(/^(providers|images|[A-Z][A-Z0-9_]*)$/), z.unknown());

export type YamlBlock =
  | { readonly type: 'objects'; readonly block: CodeBlock; readonly objects: readonly KubeObject[] }
  | { readonly type: 'expect'; readonly block: CodeBlock; readonly objects: readonly KubeObject[] }
  | { readonly type: 'clusterctl'; readonly block: CodeBlock; readonly config: Readonly<Record<string, unknown>> };

function documentsOf(page: Page, block: CodeBlock): unknown[] {
  return parseAllDocuments(block.text).map((document, index) => {
    if (document.errors.length > 0) {
      throw new Error(`${at(page, block.line)}: document ${index + 1} is not YAML: ${document.errors[0]?.message}`);
    }
    return document.toJS() as unknown;
  });
}

/** Every YAML block of a page, classified; throws naming the line of a block that is neither objects nor config. */
export function yamlBlocks(page: Page): YamlBlock[] {
  return page.blocks
    .filter((block) => block.lang === 'yaml')
    .map((block): YamlBlock => {
      const documents = documentsOf(page, block).filter((document) => document !== null && document !== undefined);
      const objects = documents.map((document) => ObjectDocument.safeParse(document));
      if (documents.length > 0 && objects.every((parsed) => parsed.success)) {
        const parsed = objects.map((object) => object.data as KubeObject);
        return block.flags.includes('expect')
          ? { type: 'expect', block, objects: parsed }
          : { type: 'objects', block, objects: parsed };
      }
      const config = ClusterctlDocument.safeParse(documents[0]);
      if (documents.length === 1 && config.success && !block.flags.includes('expect')) {
        return { type: 'clusterctl', block, config: config.data };
      }
      throw new Error(
        `${at(page, block.line)}: a YAML block must hold Kubernetes objects (apiVersion, kind, metadata) or ` +
          'clusterctl configuration (providers, images, variables)',
      );
    });
}

export interface ExampleRun {
  readonly kube: Kube;
  readonly fieldManager: string;
  /** Bounds a wait for a state the guide shows; only a hang reaches it. */
  readonly timeoutMs: number;
  /** Where to look when a state is not reached (the controller's log). */
  readonly hint: string;
}

function describeObject(object: KubeObject): string {
  const { name, namespace } = object.metadata;
  return `${object.kind} ${namespace ? `${namespace}/` : ''}${name ?? '(any)'}`;
}

/** The live object the excerpt is of, or, for an excerpt without a name (an Event), the listed ones. */
async function candidates(kube: Kube, excerpt: KubeObject): Promise<unknown[]> {
  const { name, namespace } = excerpt.metadata;
  if (name !== undefined) {
    try {
      return [await kube.get(excerpt.apiVersion, excerpt.kind, name, namespace)];
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return [];
      throw error;
    }
  }
  // A list's items carry no apiVersion and kind; the excerpt prints them as `kubectl get -o yaml` does.
  const items = await kube.list(excerpt.apiVersion, excerpt.kind, namespace);
  return items.map((item) => ({ ...item, apiVersion: excerpt.apiVersion, kind: excerpt.kind }));
}

/** Waits until the API server shows the excerpt; the timeout's message says what differs, field by field. */
export async function awaitExcerpt(page: Page, block: CodeBlock, excerpt: KubeObject, run: ExampleRun): Promise<void> {
  let last: string[] = ['not read yet'];
  await waitFor(
    `${at(page, block.line)}: ${describeObject(excerpt)} as the guide shows it`,
    async () => {
      const found = await candidates(run.kube, excerpt);
      if (found.length === 0) {
        last = ['the API server has no such object'];
        return false;
      }
      const misses = found.map((object) => excerptMismatches(excerpt, object));
      if (misses.some((problems) => problems.length === 0)) return true;
      last = misses.reduce((fewest, problems) => (problems.length < fewest.length ? problems : fewest));
      return false;
    },
    { timeoutMs: run.timeoutMs, intervalMs: 250, describe: () => last, hint: run.hint },
  );
}

const DELETE = /^kubectl\s+delete\s+(\S+)\s+(\S+)(?:\s+(?:-n|--namespace)[\s=](\S+))?\s*$/;

/** Whitespace runs as one space: the guide wraps a long message at spaces. */
function normalized(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The refusal a ```yaml refused or ```sh run refused block must meet: the ```text block right after it, which the
 * API server's message must contain (the guide prints the part a reader acts on).
 */
function refusalOf(page: Page, index: number): string {
  const next = page.blocks[index + 1];
  const block = page.blocks[index] as CodeBlock;
  if (next?.lang !== 'text') {
    throw new Error(`${at(page, block.line)}: a refused block must be followed by a \`\`\`text block with the refusal`);
  }
  return normalized(next.text);
}

/** Runs `work`, which must be refused with a message containing `expected`. */
async function expectRefusal(page: Page, block: CodeBlock, expected: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (normalized(error.apiMessage).includes(expected)) return;
    throw new Error(`${at(page, block.line)}: refused, but not as the guide says: ${error.apiMessage}`);
  }
  throw new Error(`${at(page, block.line)}: the guide says this is refused, and the API server accepted it`);
}

/** Deletes as `kubectl delete` does: it returns once the object is gone (its finalizers done). */
async function kubectlDelete(
  page: Page,
  block: CodeBlock,
  line: string,
  run: ExampleRun,
): Promise<() => Promise<void>> {
  const match = DELETE.exec(line.trim());
  if (!match) throw new Error(`${at(page, block.line)}: a run block may only hold kubectl delete, not: ${line}`);
  const resource = await run.kube.resourceNamed(match[1] ?? '');
  const name = match[2] ?? '';
  const namespace = resource.namespaced ? (match[3] ?? 'default') : undefined;
  return async () => {
    await run.kube.delete(resource.apiVersion, resource.kind, name, namespace);
    await waitFor(
      `${at(page, block.line)}: ${resource.kind} ${name} deleted`,
      async () => {
        try {
          await run.kube.get(resource.apiVersion, resource.kind, name, namespace);
          return false;
        } catch (error) {
          if (error instanceof ApiError && error.status === 404) return true;
          throw error;
        }
      },
      { timeoutMs: run.timeoutMs, intervalMs: 250, hint: run.hint },
    );
  };
}

/** What running a page did, for the test's assertions and its failure messages. */
export interface PageRun {
  readonly applied: number;
  readonly excerpts: number;
  readonly commands: number;
  readonly refusals: number;
}

/**
 * Applies a page's objects in order and waits for each state it shows, as a reader following it would. A ```sh run
 * block holds the commands the guide has the reader run between two states; only `kubectl delete <type> <name>
 * [-n <namespace>]` is understood.
 */
export async function runPage(page: Page, run: ExampleRun): Promise<PageRun> {
  const done = { applied: 0, excerpts: 0, commands: 0, refusals: 0 };
  const yaml = new Map(yamlBlocks(page).map((entry) => [entry.block, entry]));
  for (const [index, block] of page.blocks.entries()) {
    const refused = block.flags.includes('refused');
    if (block.lang === 'sh' && block.flags.includes('run')) {
      const lines = block.text.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
      for (const line of lines) {
        const command = await kubectlDelete(page, block, line, run);
        if (refused) await expectRefusal(page, block, refusalOf(page, index), command);
        else await command();
        done.commands += 1;
      }
      continue;
    }
    const entry = yaml.get(block);
    if (entry?.type === 'objects') {
      for (const object of entry.objects) {
        const apply = (): Promise<void> => run.kube.apply(object, run.fieldManager);
        if (refused) {
          await expectRefusal(page, block, refusalOf(page, index), apply);
          done.refusals += 1;
          continue;
        }
        try {
          await apply();
        } catch (error) {
          throw new Error(`${at(page, block.line)}: applying ${describeObject(object)}: ${String(error)}`);
        }
        done.applied += 1;
      }
    } else if (entry?.type === 'expect') {
      for (const excerpt of entry.objects) {
        await awaitExcerpt(page, block, excerpt, run);
        done.excerpts += 1;
      }
    }
  }
  return done;
}
