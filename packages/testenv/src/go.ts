import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { z } from 'zod';
import { GO_ENV, MINIMUM_GO_VERSION } from './versions.js';

const execFileAsync = promisify(execFile);

export interface GoToolchain {
  /** e.g. `go1.26.8`. */
  readonly version: string;
  readonly goos: string;
  readonly goarch: string;
  readonly gomodcache: string;
}

const goEnvSchema = z.object({
  GOVERSION: z.string().min(1),
  GOOS: z.string().min(1),
  GOARCH: z.string().min(1),
  GOMODCACHE: z.string().min(1),
});

/** The environment every Go command of this package runs with. */
export function goEnvironment(): NodeJS.ProcessEnv {
  return { ...process.env, ...GO_ENV };
}

function isMissingExecutable(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ENOENT';
}

/**
 * Finds `go` on PATH and checks it can build Kubernetes 1.34. Throws an error that says what to install otherwise.
 */
export async function detectGo(): Promise<GoToolchain> {
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('go', ['env', '-json', 'GOVERSION', 'GOOS', 'GOARCH', 'GOMODCACHE'], {
      env: goEnvironment(),
    }));
  } catch (error) {
    if (isMissingExecutable(error)) {
      throw new Error(
        `Go is not installed (no "go" on PATH). The test control plane is built from source and needs Go >= ${MINIMUM_GO_VERSION.major}.${MINIMUM_GO_VERSION.minor}; ` +
          'install it from https://go.dev/dl/, or set TALLY_TEST_KUBECONFIG to use an existing cluster.',
      );
    }
    throw new Error(`"go env" failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const env = goEnvSchema.parse(JSON.parse(stdout));
  const match = /^go(\d+)\.(\d+)/.exec(env.GOVERSION);
  if (!match?.[1] || !match[2]) throw new Error(`cannot parse the Go version "${env.GOVERSION}"`);
  const goMajor = Number(match[1]);
  const goMinor = Number(match[2]);
  if (
    goMajor < MINIMUM_GO_VERSION.major ||
    (goMajor === MINIMUM_GO_VERSION.major && goMinor < MINIMUM_GO_VERSION.minor)
  ) {
    throw new Error(
      `Go ${env.GOVERSION} is too old: Kubernetes 1.34 needs Go >= ${MINIMUM_GO_VERSION.major}.${MINIMUM_GO_VERSION.minor} ` +
        '(GOTOOLCHAIN=local is set on purpose, so Go will not download a newer toolchain).',
    );
  }
  return { version: env.GOVERSION, goos: env.GOOS, goarch: env.GOARCH, gomodcache: env.GOMODCACHE };
}

const moduleDownloadSchema = z.object({
  Path: z.string(),
  Version: z.string(),
  Dir: z.string().optional(),
  Error: z.string().optional(),
});

/** Downloads (or finds in the module cache) one module version and returns its read-only source directory. */
export async function downloadGoModule(modulePath: string, version: string): Promise<string> {
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('go', ['mod', 'download', '-json', `${modulePath}@${version}`], {
      env: goEnvironment(),
      // Outside any module, so no go.mod or go.work around the caller changes what is resolved.
      cwd: '/',
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (error) {
    if (isMissingExecutable(error)) {
      throw new Error(`Go is not installed (no "go" on PATH); it is needed to fetch ${modulePath}@${version}.`);
    }
    const output = error instanceof Error && 'stdout' in error ? String(error.stdout) : '';
    throw new Error(`go mod download ${modulePath}@${version} failed: ${output || String(error)}`, { cause: error });
  }
  const info = moduleDownloadSchema.parse(JSON.parse(stdout));
  if (info.Error || !info.Dir) {
    throw new Error(`go mod download ${modulePath}@${version} failed: ${info.Error ?? 'no directory reported'}`);
  }
  return info.Dir;
}
