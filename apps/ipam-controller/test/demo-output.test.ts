import { ApiextensionsV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { formatLogLine } from '../src/demo/demo-logger.js';
import { DEMO_KUBECTL_RESOURCES } from '../src/demo/run-demo.js';

describe("the demo's printed kubectl line", () => {
  it('names each resource with its group, since a bare `ipaddresses` is also the core networking.k8s.io kind', async () => {
    const kc = testEnv().kubeConfig;
    // The ambiguity the qualified names avoid: kubectl resolves a bare `ipaddresses` to networking.k8s.io.
    const networking = await kc.makeApiClient(NetworkingV1Api).getAPIResources();
    expect(networking.resources.map((r) => r.name)).toContain('ipaddresses');
    const crds = kc.makeApiClient(ApiextensionsV1Api);
    for (const resource of DEMO_KUBECTL_RESOURCES) {
      // A CRD's name is exactly `<plural>.<group>`, what kubectl accepts as a fully qualified resource.
      const crd = await crds.readCustomResourceDefinition({ name: resource });
      expect(`${crd.spec.names.plural}.${crd.spec.group}`).toBe(resource);
    }
  });
});

describe('the demo controller log format', () => {
  it('turns a pino JSON line into time, level, logger, message and key=value fields, with the error stack below', () => {
    const line = JSON.stringify({
      level: 'error',
      time: '2026-11-24T11:22:33.456Z',
      logger: 'tally-ipam',
      msg: 'reconcile failed',
      controller: 'ipaddressclaim',
      request: 'demo/claim-1',
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x (y.js:1:1)' },
    });
    expect(formatLogLine(line)).toBe(
      '11:22:33.456 ERROR tally-ipam reconcile failed controller=ipaddressclaim request=demo/claim-1\n' +
        '    Error: boom\n        at x (y.js:1:1)',
    );
  });

  it('quotes values with spaces, cuts long values and keeps lines that are not JSON objects as they are', () => {
    const long = 'x'.repeat(300);
    const formatted = formatLogLine(
      JSON.stringify({ level: 'info', time: '2026-11-24T11:22:33.456Z', msg: 'm', reason: 'a b', long, n: 3 }),
    );
    expect(formatted).toBe(`11:22:33.456 INFO  m reason="a b" long=${'x'.repeat(200)}… n=3`);
    expect(formatLogLine('not json\n')).toBe('not json');
    expect(formatLogLine('[1,2]')).toBe('[1,2]');
  });
});
