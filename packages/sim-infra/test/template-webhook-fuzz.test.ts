import type { AdmissionRequest } from '@tally-ipam/controller-kit/webhook';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SIM_TEMPLATE_WEBHOOKS, templateImmutabilityHandler } from '../src/index.js';

/**
 * Hostile updates for the Sim template webhooks, through the handler the webhook server calls: nothing thrown, every
 * answer bounded, a denial names the field, and no input over a generous per-input budget of CPU time (a bound, not a
 * speed claim). CPU time, not wall-clock time: what this process spent on the input, which other work on the machine
 * does not lengthen; the slowest wall-clock time is reported beside it.
 */

const RUNS = 5_000;
const PER_INPUT_BUDGET_MS = 1_000;
const MAX_MESSAGE_LENGTH = 8_192;
/** One input without an answer this long is a hang (a promise that never settles): testenv's default wait. */
const INPUT_HANG_BOUND_MS = 120_000;

/** The handler's answer, or a failure naming a hang: the bound of a single input, not of the whole run. */
async function answerOrHang<T>(answer: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${INPUT_HANG_BOUND_MS} ms: a hang`)),
      INPUT_HANG_BOUND_MS,
    );
  });
  try {
    return await Promise.race([answer, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** CPU time this process has spent so far (user and system, all its threads), in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

let deep: unknown = 'x';
for (let level = 0; level < 100_000; level += 1) deep = level % 2 === 0 ? [deep] : { a: deep };
const HUGE = 'x'.repeat(1 << 20);

const hostile = fc.oneof(
  fc.constantFrom<unknown>(deep, HUGE, null, true, 2 ** 53, -(2 ** 31), -0, 1e300, 'NaN', [], {}, [deep]),
  fc.jsonValue({ maxDepth: 4 }),
);

function template(kind: string, spec: unknown, metadata: unknown): Record<string, unknown> {
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
    kind,
    metadata: metadata ?? { name: 't', namespace: 'n' },
    spec: { template: { spec } },
  };
}

describe('fuzz: Sim template webhooks under hostile updates', () => {
  // No wall-clock timeout: a fixed count of inputs, each bounded in CPU time and by the hang bound; on a shared
  // machine the same work takes any multiple of its CPU time.
  it(`answer ${RUNS} generated reviews without throwing, bounded, naming the field`, { timeout: 0 }, async () => {
    let slowest = 0;
    let costliest = 0;
    let overBudget = 0;
    const startedAt = performance.now();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SIM_TEMPLATE_WEBHOOKS),
        hostile,
        hostile,
        fc.option(hostile, { nil: undefined }),
        fc.boolean(),
        async (webhook, before, after, metadata, dryRun) => {
          const request: AdmissionRequest = {
            uid: 'fuzz',
            kind: { group: 'infrastructure.cluster.x-k8s.io', version: 'v1alpha1', kind: webhook.kind },
            resource: { group: 'infrastructure.cluster.x-k8s.io', version: 'v1alpha1', resource: webhook.plural },
            name: 't',
            namespace: 'n',
            operation: 'UPDATE',
            userInfo: {},
            object: template(webhook.kind, after, metadata),
            oldObject: template(webhook.kind, before, undefined),
            dryRun,
            options: undefined,
          };
          const started = performance.now();
          const startedCpu = cpuMs();
          const decision = await answerOrHang(Promise.resolve(templateImmutabilityHandler(webhook.kind)(request)));
          const spentCpu = cpuMs() - startedCpu;
          slowest = Math.max(slowest, performance.now() - started);
          costliest = Math.max(costliest, spentCpu);
          if (spentCpu > PER_INPUT_BUDGET_MS) overBudget += 1;
          if (!decision.allowed) {
            expect(decision.status?.message.length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
            expect(decision.status?.message).toMatch(/(spec|metadata)[.:[]/);
          }
        },
      ),
      { numRuns: RUNS, endOnFailure: true },
    );
    console.log(
      `Sim template webhooks: ${RUNS} inputs in ${((performance.now() - startedAt) / 1000).toFixed(1)} s, costliest ${costliest.toFixed(1)} ms of CPU, slowest ${slowest.toFixed(1)} ms of wall-clock time`,
    );
    expect(overBudget).toBe(0);
  });
});
