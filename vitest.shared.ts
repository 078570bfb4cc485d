import { defineConfig, type ViteUserConfig } from 'vitest/config';

export interface PackageTestOptions {
  /** Files run once per test run before any test file (e.g. starting the test control plane). */
  globalSetup?: string[];
  /** Per-test timeout; tests against a real control plane need more than vitest's 5 s default. */
  testTimeout?: number;
  /** Run test files one after another (tests that share one control plane and assert on global state). */
  sequential?: boolean;
}

/**
 * The one vitest configuration every package uses: tests live in `test/`, compiled output is never collected,
 * and results are also written as JSON so `.ci/run` can sum them across packages.
 */
export function packageTestConfig(options: PackageTestOptions = {}): ViteUserConfig {
  return defineConfig({
    test: {
      include: ['test/**/*.test.ts'],
      exclude: ['**/node_modules/**', '**/dist/**'],
      reporters: ['default', ['json', { outputFile: 'test-results.json' }]],
      globalSetup: options.globalSetup ?? [],
      testTimeout: options.testTimeout ?? 5_000,
      hookTimeout: Math.max(options.testTimeout ?? 10_000, 10_000),
      fileParallelism: !options.sequential,
      passWithNoTests: false,
    },
  });
}
