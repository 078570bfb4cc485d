import { describe, expect, it } from 'vitest';
import { capiManagerBuild, clusterctlBuild } from '../src/index.js';
import {
  CLUSTER_API_RELEASES,
  CLUSTER_API_VERSION_ENV,
  clusterApiLdflags,
  clusterApiVersion,
  DEFAULT_CLUSTER_API_VERSION,
  OLDEST_CLUSTER_API_VERSION,
} from '../src/versions.js';

describe('choosing the Cluster API release', () => {
  it('defaults to the current release; the oldest supported is in the table too', () => {
    expect(clusterApiVersion(undefined, {})).toBe(DEFAULT_CLUSTER_API_VERSION);
    expect(Object.keys(CLUSTER_API_RELEASES)).toContain(DEFAULT_CLUSTER_API_VERSION);
    expect(Object.keys(CLUSTER_API_RELEASES)).toContain(OLDEST_CLUSTER_API_VERSION);
  });

  it(`takes ${CLUSTER_API_VERSION_ENV} for a whole run, and an explicit version over it`, () => {
    const env = { [CLUSTER_API_VERSION_ENV]: OLDEST_CLUSTER_API_VERSION };
    expect(clusterApiVersion(undefined, env)).toBe(OLDEST_CLUSTER_API_VERSION);
    expect(clusterApiVersion(DEFAULT_CLUSTER_API_VERSION, env)).toBe(DEFAULT_CLUSTER_API_VERSION);
    expect(clusterApiVersion(undefined, { [CLUSTER_API_VERSION_ENV]: ' ' })).toBe(DEFAULT_CLUSTER_API_VERSION);
  });

  it('refuses a release it does not build instead of falling back to the default', () => {
    expect(() => clusterApiVersion(undefined, { [CLUSTER_API_VERSION_ENV]: 'v1.13.6' })).toThrow(
      /Cluster API v1\.13\.6 is not a release testenv builds \(supported: .*\) \(from TALLY_CAPI_VERSION\)/,
    );
    expect(() => clusterApiVersion('1.14.2', {})).toThrow(/not a release testenv builds/);
  });

  it('links the version into the manager', () => {
    expect(clusterApiLdflags('v1.14.2')).toContain('-X sigs.k8s.io/cluster-api/version.gitMinor=14');
    expect(() => clusterApiLdflags('v1.14')).toThrow(/not of the form vMAJOR\.MINOR\.PATCH/);
  });
});

describe('how each release is built', () => {
  it('v1.12.10 with go install of the module as released', () => {
    const [manager] = capiManagerBuild({ version: 'v1.12.10' }).steps;
    expect(manager?.source).toEqual({ kind: 'install', version: 'v1.12.10' });
    expect(manager?.packages).toEqual(['sigs.k8s.io/cluster-api']);
    expect(manager?.tags).toBeUndefined();
    const [clusterctl] = clusterctlBuild({ version: 'v1.12.10' }).steps;
    expect(clusterctl?.packages).toEqual(['sigs.k8s.io/cluster-api/cmd/clusterctl']);
  });

  it('v1.14.2 in a copy of the module with its api module where its replace points, the manager with its tag', () => {
    const [manager] = capiManagerBuild({ version: 'v1.14.2' }).steps;
    expect(manager?.source).toEqual({
      kind: 'proxy-module',
      module: 'sigs.k8s.io/cluster-api',
      version: 'v1.14.2',
      nestedModules: [{ dir: 'api', module: 'sigs.k8s.io/cluster-api/api', version: 'v1.14.2' }],
    });
    expect(manager?.packages).toEqual(['./core']);
    expect(manager?.tags).toBe('fieldsv1string');
    expect(manager?.output).toBe('cluster-api');
    const [clusterctl] = clusterctlBuild({ version: 'v1.14.2' }).steps;
    expect(clusterctl?.packages).toEqual(['./cmd/clusterctl']);
    expect(clusterctl?.tags).toBeUndefined();
  });
});
