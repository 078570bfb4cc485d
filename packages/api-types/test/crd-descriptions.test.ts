import { describe, expect, it } from 'vitest';
import { generatedCRDFiles } from '../src/index.js';

interface SchemaNode {
  type?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/** Paths of object-valued properties (and list items that are objects) that `kubectl explain` would show bare. */
function undescribed(node: SchemaNode, path: string): string[] {
  const missing: string[] = [];
  if (node.type === 'object' && (node.description ?? '').trim() === '') missing.push(path);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    // The root's metadata: the API server publishes ObjectMeta (with its own text) in its place for kubectl explain.
    if (path.indexOf('.') === -1 && name === 'metadata') continue;
    missing.push(...undescribed(child, `${path}.${name}`));
  }
  if (node.items !== undefined) {
    // An array's explain text is the array's own description; its object items are shown under it.
    const items = node.items;
    const arrayDescribed = (node.description ?? '').trim() !== '';
    if (!(items.type === 'object' && arrayDescribed && (items.description ?? '') === '')) {
      missing.push(...undescribed(items, `${path}[]`));
    } else {
      for (const [name, child] of Object.entries(items.properties ?? {})) {
        missing.push(...undescribed(child, `${path}[].${name}`));
      }
    }
  }
  return missing;
}

describe('kubectl explain', () => {
  it('every object-valued field of every Tally CRD has a description', () => {
    const missing = generatedCRDFiles().flatMap((file) =>
      file.crd.spec.versions.flatMap((version) =>
        undescribed(version.schema.openAPIV3Schema as SchemaNode, `${file.crd.spec.names.kind}`),
      ),
    );
    expect(missing).toEqual([]);
  });

  it('finds an object-valued field without a description', () => {
    const node: SchemaNode = {
      type: 'object',
      description: 'root',
      properties: { spec: { type: 'object', properties: { inner: { type: 'object', description: 'x' } } } },
    };
    expect(undescribed(node, 'Kind')).toEqual(['Kind.spec']);
  });
});
