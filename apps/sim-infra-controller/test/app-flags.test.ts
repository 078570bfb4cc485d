import { FlagError } from '@tally-ipam/controller-kit/manager';
import { describe, expect, it } from 'vitest';
import { LEADER_ELECTION_ID, parseAppFlags } from '../src/app-flags.js';

describe('parseAppFlags', () => {
  it('takes the kit manager flags and CAPI webhook flags with their defaults', () => {
    const flags = parseAppFlags(['--namespace', 'capi', '--webhook-port=0', '--leader-elect']);
    expect(flags.manager.namespace).toBe('capi');
    expect(flags.manager.leaderElect).toBe(true);
    expect(flags.manager.leaderElectionId).toBe(LEADER_ELECTION_ID);
    expect(flags.webhook).toEqual({
      port: 0,
      certDir: '/tmp/k8s-webhook-server/serving-certs',
      certName: 'tls.crt',
      keyName: 'tls.key',
      shutdownDelayMs: 0,
    });
    expect(parseAppFlags(['--webhook-cert-dir', '/certs']).webhook).toMatchObject({ port: 9443, certDir: '/certs' });
  });

  it('refuses bad values naming the flag', () => {
    expect(() => parseAppFlags(['--webhook-port=70000'])).toThrow(FlagError);
    expect(() => parseAppFlags(['--webhook-port=70000'])).toThrow(/webhook-port/);
    expect(() => parseAppFlags(['--webhook-cert-dir='])).toThrow(/must not be empty/);
    expect(() => parseAppFlags(['--webhook-key-name'])).toThrow(/needs a value/);
    expect(() => parseAppFlags(['--webhook-shutdown-delay=30s'])).toThrow(
      'invalid value "30s" for flag --webhook-shutdown-delay: must be at most 20s',
    );
    expect(() => parseAppFlags(['--frobnicate'])).toThrow(FlagError);
  });
});
