import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVcsim, type Vcsim } from '../src/index.js';

describe('the vCenter simulator', () => {
  let vcsim: Vcsim;

  beforeAll(async () => {
    vcsim = await startVcsim({ onProgress: (line) => console.error(`[vcsim test] ${line}`) });
  });
  afterAll(async () => {
    await vcsim?.stop();
  });

  it('serves the vSphere API on loopback with TLS, reporting its certificate thumbprint and inventory', async () => {
    expect(vcsim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/sdk$/);
    expect(vcsim.server).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(vcsim.thumbprint).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
    expect(vcsim.datacenter).toBe('DC0');
    expect(vcsim.resourcePool).toBe('/DC0/host/DC0_C0/Resources');
    expect(vcsim.folder).toBe('/DC0/vm');
    expect(vcsim.networks).toEqual(['VM Network', 'DC0_DVPG0']);
    // What a client pinning the thumbprint sees: the certificate served is the one reported.
    const port = Number(vcsim.server.split(':')[1]);
    const fingerprint = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate().fingerprint);
        socket.end();
      });
      socket.once('error', reject);
    });
    expect(fingerprint).toBe(vcsim.thumbprint);
  });

  it('holds a powered-off template with a NIC and a disk to clone, and no other VM in the cluster', async () => {
    const vms = await vcsim.vms();
    const template = vms.find((vm) => vm.name === vcsim.template);
    expect(template, JSON.stringify(vms)).toBeDefined();
    expect(template?.template).toBe(true);
    expect(template?.powerState).toBe('poweredOff');
    expect(template?.nics.length).toBeGreaterThan(0);
    expect(template?.guestNet.flatMap((nic) => nic.addresses)).toEqual([]);
    // The model's other VM sits on the standalone host; CAPV's clones go to the cluster's resource pool.
    expect(vms.filter((vm) => !vm.template).map((vm) => vm.name)).toEqual(['DC0_H0_VM0']);
  });

  it('stops cleanly: the process and its state directory are gone', async () => {
    const stateDir = dirname(dirname(vcsim.logPath));
    expect(existsSync(stateDir)).toBe(true);
    await vcsim.stop();
    expect(existsSync(stateDir)).toBe(false);
    expect(() => process.kill(vcsim.pid, 0)).toThrow();
  });
});
