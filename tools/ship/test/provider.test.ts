import { describe, expect, it } from 'vitest';
import { defineProvider } from '../src/provider.js';

const appDir = new URL('..', import.meta.url);

describe('defineProvider', () => {
  it('derives the components file from the provider type and the image repository from the name', () => {
    const provider = defineProvider({
      appDir,
      providerName: 'infrastructure-sim',
      imageName: 'sim-infra-controller',
      imageVariable: 'SIM_INFRA_IMAGE',
    });
    expect(provider.componentsFile).toBe('infrastructure-components.yaml');
    expect(provider.imageRepository).toBe('ghcr.io/tally-ipam/sim-infra-controller');
    expect(provider.version).toBe('0.0.0');
    expect(
      defineProvider({ appDir, providerName: 'control-plane-x', imageName: 'x', imageVariable: 'X' }).componentsFile,
    ).toBe('control-plane-components.yaml');
  });

  it('refuses a provider name without a clusterctl type and a malformed image variable, naming them', () => {
    expect(() => defineProvider({ appDir, providerName: 'tally', imageName: 'x', imageVariable: 'X' })).toThrow(
      /providerName "tally" must be <type>-<name>/,
    );
    expect(() =>
      defineProvider({ appDir, providerName: 'ipam-tally', imageName: 'x', imageVariable: 'tally_image' }),
    ).toThrow(/imageVariable "tally_image"/);
  });
});
