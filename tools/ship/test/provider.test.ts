import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defineProvider } from '../src/provider.js';

const appDir = new URL('..', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('defineProvider', () => {
  it('derives the components file from the provider type and the image from the name and version', () => {
    const provider = defineProvider({
      appDir,
      providerName: 'infrastructure-sim',
      imageName: 'sim-infra-controller',
      variablePrefix: 'SIM_INFRA_',
    });
    expect(provider.componentsFile).toBe('infrastructure-components.yaml');
    expect(provider.imageRepository).toBe('ghcr.io/tally-ipam/sim-infra-controller');
    expect(provider.version).toBe(version);
    expect(provider.image).toBe(`ghcr.io/tally-ipam/sim-infra-controller:v${version}`);
    expect(
      defineProvider({ appDir, providerName: 'control-plane-x', imageName: 'x', variablePrefix: 'X_' }).componentsFile,
    ).toBe('control-plane-components.yaml');
  });

  it('refuses a provider name without a clusterctl type and a malformed variable prefix, naming them', () => {
    expect(() => defineProvider({ appDir, providerName: 'tally', imageName: 'x', variablePrefix: 'X_' })).toThrow(
      /providerName "tally" must be <type>-<name>/,
    );
    expect(() =>
      defineProvider({ appDir, providerName: 'ipam-tally', imageName: 'x', variablePrefix: 'tally_' }),
    ).toThrow(/variablePrefix "tally_"/);
    expect(() =>
      defineProvider({ appDir, providerName: 'ipam-tally', imageName: 'x', variablePrefix: 'TALLY_IMAGE' }),
    ).toThrow(/variablePrefix "TALLY_IMAGE"/);
  });
});
