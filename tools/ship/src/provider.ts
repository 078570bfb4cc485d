import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';

/** The label clusterctl finds a provider's objects by (`clusterctl move`, `delete`, upgrades). */
export const PROVIDER_LABEL = 'cluster.x-k8s.io/provider';
/** Where the images are published; the image of an app is `<registry>/<imageName>:v<version>`. */
export const IMAGE_REGISTRY = 'ghcr.io/tally-ipam';

/** clusterctl provider types, as the prefix of the provider name and of the components file name. */
const PROVIDER_TYPES = [
  'core',
  'bootstrap',
  'control-plane',
  'infrastructure',
  'ipam',
  'runtime-extension',
  'addon',
] as const;

/** What an app declares about how it ships. */
export interface ProviderDeclaration {
  /** The app directory (holding `config/`, `metadata.yaml`, `package.json`, `dist/main.js`), e.g. `new URL('..', import.meta.url)`. */
  readonly appDir: string | URL;
  /** The clusterctl provider name, `<type>-<name>` (`ipam-tally`, `infrastructure-sim`): the provider label's value. */
  readonly providerName: string;
  /** The image name under `ghcr.io/tally-ipam`, also the name of the archive (`dist/image/<imageName>.tar`). */
  readonly imageName: string;
  /**
   * The prefix of every clusterctl variable of the app's components, e.g. `TALLY_IPAM_` (`TALLY_IPAM_LOG_LEVEL`). The
   * image is not one of them: it is a literal (`<registry>/<imageName>:v<version>`), so clusterctl can parse it and
   * apply its own `images:` override.
   */
  readonly variablePrefix: string;
}

/** An app's shipping facts, with the paths and names derived from its declaration. */
export interface ShippedProvider {
  readonly appDir: string;
  readonly configDir: string;
  readonly metadataFile: string;
  readonly providerName: string;
  /** `<type>-components.yaml`, the file name clusterctl looks for in a provider repository. */
  readonly componentsFile: string;
  readonly imageName: string;
  readonly imageRepository: string;
  /** `<imageRepository>:v<version>`: the image the components of this version name. */
  readonly image: string;
  readonly variablePrefix: string;
  /** `version` from the app's package.json. */
  readonly version: string;
}

const PackageJson = z.object({ version: z.string().min(1) });

/** Validates a declaration and derives the rest; throws naming the field and value that do not fit. */
export function defineProvider(declaration: ProviderDeclaration): ShippedProvider {
  const appDir = resolve(declaration.appDir instanceof URL ? fileURLToPath(declaration.appDir) : declaration.appDir);
  const type = PROVIDER_TYPES.find((candidate) => declaration.providerName.startsWith(`${candidate}-`));
  const name = type ? declaration.providerName.slice(type.length + 1) : '';
  if (!type || !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(name)) {
    throw new Error(
      `providerName "${declaration.providerName}" must be <type>-<name> with type one of ${PROVIDER_TYPES.join(', ')}`,
    );
  }
  if (!/^[A-Z][A-Z0-9_]*_$/.test(declaration.variablePrefix)) {
    throw new Error(
      `variablePrefix "${declaration.variablePrefix}" must be an upper-case clusterctl variable prefix ending in _`,
    );
  }
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(declaration.imageName)) {
    throw new Error(`imageName "${declaration.imageName}" must be a lower-case image name`);
  }
  const packageFile = join(appDir, 'package.json');
  const parsed = PackageJson.safeParse(JSON.parse(readFileSync(packageFile, 'utf8')));
  if (!parsed.success) throw new Error(`${packageFile}: version: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return {
    appDir,
    configDir: join(appDir, 'config'),
    metadataFile: join(appDir, 'metadata.yaml'),
    providerName: declaration.providerName,
    componentsFile: `${type}-components.yaml`,
    imageName: declaration.imageName,
    imageRepository: `${IMAGE_REGISTRY}/${declaration.imageName}`,
    image: `${IMAGE_REGISTRY}/${declaration.imageName}:v${parsed.data.version}`,
    variablePrefix: declaration.variablePrefix,
    version: parsed.data.version,
  };
}
