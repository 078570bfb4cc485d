/**
 * How the Sim infrastructure controller ships, and the clusterctl components generator (`pnpm gen-components`):
 *
 *   tsx scripts/render-components.ts [--out <dir>] [--version <semver>] [--image <ref>]
 *
 * writes `<dir>/infrastructure-components.yaml` and `<dir>/metadata.yaml` (default `dist/release`), the two files a
 * clusterctl provider repository needs per version. The rendering is @tally-ipam/ship's, shared with the IPAM app.
 */
import { defineProvider, runComponentsCliIfMain, type ShippedProvider } from '@tally-ipam/ship';

export const SIM_PROVIDER: ShippedProvider = defineProvider({
  appDir: new URL('..', import.meta.url),
  providerName: 'infrastructure-sim',
  imageName: 'sim-infra-controller',
  variablePrefix: 'SIM_INFRA_',
});

runComponentsCliIfMain(import.meta.url, SIM_PROVIDER);
