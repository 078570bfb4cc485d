/**
 * How the Tally IPAM controller ships, and the clusterctl components generator (`pnpm gen-components`):
 *
 *   tsx scripts/render-components.ts [--out <dir>] [--version <semver>] [--image <ref>]
 *
 * writes `<dir>/ipam-components.yaml` and `<dir>/metadata.yaml` (default `dist/release`), the two files a clusterctl
 * provider repository needs per version. The rendering is @tally-ipam/ship's, shared with the Sim controller.
 */
import { defineProvider, runComponentsCliIfMain, type ShippedProvider } from '@tally-ipam/ship';

export const IPAM_PROVIDER: ShippedProvider = defineProvider({
  appDir: new URL('..', import.meta.url),
  providerName: 'ipam-tally',
  imageName: 'ipam-controller',
  variablePrefix: 'TALLY_IPAM_',
});

runComponentsCliIfMain(import.meta.url, IPAM_PROVIDER);
