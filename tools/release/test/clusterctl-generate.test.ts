import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClusterctl } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import {
  appsVersion,
  type ClusterctlRepository,
  RELEASED_PROVIDERS,
  writeClusterctlRepository,
} from '../src/artifacts.js';
import { run } from '../src/workspace.js';

const version = appsVersion();
const work = mkdtempSync(join(tmpdir(), 'tally-clusterctl-'));
let clusterctl = '';
let repository: ClusterctlRepository;

/** clusterctl with a private home (no ~/.cluster-api, no overrides) and no check for newer releases on GitHub. */
function clusterctlEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: work, XDG_CONFIG_HOME: join(work, '.config') };
  env.CLUSTERCTL_DISABLE_VERSIONCHECK = 'true';
  delete env.KUBECONFIG;
  return env;
}

function generate(args: readonly string[], config: string = repository.configPath): string {
  return run(clusterctl, ['generate', 'provider', ...args, '--config', config], work, clusterctlEnv());
}

function deploymentImages(yamlText: string): string[] {
  return parseAllDocuments(yamlText)
    .map(
      (document) =>
        document.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: { image: string }[] } } } },
    )
    .filter((object) => object?.kind === 'Deployment')
    .flatMap((deployment) => deployment.spec?.template?.spec?.containers?.map((container) => container.image) ?? []);
}

beforeAll(async () => {
  clusterctl = (await ensureClusterctl()).path;
  repository = writeClusterctlRepository(join(work, 'release'), version);
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe.each(
  RELEASED_PROVIDERS.map((provider) => ({
    ...provider,
    flag: provider.type === 'IPAMProvider' ? '--ipam' : '--infrastructure',
  })),
)('clusterctl generate provider $flag $name (from the local repository)', (provider) => {
  const image = `ghcr.io/tally-ipam/${provider.image}:v${version}`;

  it('--describe names the version, the variables and the literal image', () => {
    const described = generate([provider.flag, provider.name, '--describe']);
    expect(described).toMatch(new RegExp(`Version:\\s+v${version.replaceAll('.', '\\.')}\\n`));
    expect(described).toContain(`File:               ${provider.componentsFile}`);
    expect(described).toMatch(new RegExp(`Images:\\n  - ${image.replaceAll('.', '\\.')}\\n`));
    // The variables are listed sorted; every provider has these two (the IPAM provider has more).
    const variables = (/Variables:\n((?: {2}- [A-Z0-9_]+\n)+)/.exec(described)?.[1] ?? '')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/^ {2}- /, ''));
    expect(variables).toEqual([...variables].sort());
    expect(variables.filter((name) => /_(CONCURRENCY|LOG_LEVEL)$/.test(name))).toHaveLength(2);
  });

  it('--write-to writes the components with the variables substituted and the image as released', () => {
    const out = join(work, `${provider.label}.yaml`);
    generate([provider.flag, provider.name, '--write-to', out]);
    const written = readFileSync(out, 'utf8');
    expect(written).not.toContain('${');
    expect(deploymentImages(written)).toEqual([image]);
  });

  it('--raw prints the file as released, variables kept', () => {
    const raw = generate([provider.flag, provider.name, '--raw']);
    expect(raw).toContain('_LOG_LEVEL:=info}');
    expect(deploymentImages(raw)).toEqual([image]);
  });

  it("clusterctl's own images: override replaces the literal image's repository", () => {
    const config = join(work, `${provider.label}-override.yaml`);
    const providers = (parse(readFileSync(repository.configPath, 'utf8')) as { providers: unknown[] }).providers;
    writeFileSync(
      config,
      stringify({ providers, images: { [provider.label]: { repository: 'registry.example/mirror' } } }),
    );
    const out = join(work, `${provider.label}-override-out.yaml`);
    generate([provider.flag, provider.name, '--write-to', out], config);
    expect(deploymentImages(readFileSync(out, 'utf8'))).toEqual([
      `registry.example/mirror/${provider.image}:v${version}`,
    ]);
  });
});
