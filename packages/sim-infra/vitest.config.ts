import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../vitest.shared.ts';

const shared = packageTestConfig({ testTimeout: 180_000 }).test ?? {};

/** What both projects share (the repository's settings); each names its own files and control plane. */
const common = {
  exclude: shared.exclude,
  testTimeout: shared.testTimeout,
  hookTimeout: shared.hookTimeout,
  passWithNoTests: false,
};

/**
 * Two projects, each with its own control plane: `sim` runs the providers against plain Cluster API CRDs (the test plays
 * the core controllers where needed); `capi` runs them next to the real Cluster API manager, which must own every
 * Cluster and Machine there — the two cannot share an API server.
 */
export default defineConfig({
  test: {
    reporters: shared.reporters,
    projects: [
      {
        test: {
          ...common,
          name: 'sim',
          include: ['test/*.test.ts'],
          globalSetup: ['./test/global-setup.ts'],
        },
      },
      {
        test: {
          ...common,
          name: 'capi',
          include: ['test/capi/*.test.ts'],
          globalSetup: ['./test/capi/global-setup.ts'],
          testTimeout: 420_000,
          hookTimeout: 420_000,
        },
      },
    ],
  },
});
