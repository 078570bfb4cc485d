import { FlagError } from '@tally-ipam/controller-kit';
import { describe, expect, it } from 'vitest';
import { LEADER_ELECTION_ID, parseAppFlags } from '../src/app-flags.js';

describe('parseAppFlags', () => {
  it('defaults the webhook flags to controller-runtime values and the manager flags to the kit defaults', () => {
    const flags = parseAppFlags([]);
    expect(flags.webhook).toEqual({
      port: 9443,
      certDir: '/tmp/k8s-webhook-server/serving-certs',
      certName: 'tls.crt',
      keyName: 'tls.key',
    });
    expect(flags.manager.leaderElectionId).toBe(LEADER_ELECTION_ID);
    expect(flags.manager.diagnosticsAddress).toBe(':8443');
    expect(flags.manager.metricsBindAddress).toBeUndefined();
    expect(flags.given.size).toBe(0);
    expect(flags.help).toBe(false);
  });

  it('takes webhook flags in both forms and leaves the rest to the manager parser', () => {
    const flags = parseAppFlags([
      '--webhook-port=0',
      '--webhook-cert-dir',
      '/certs',
      '--kubeconfig',
      '/kc',
      '--webhook-key-name=key.pem',
      '--leader-elect',
      '--concurrency=3',
    ]);
    expect(flags.webhook).toMatchObject({ port: 0, certDir: '/certs', keyName: 'key.pem', certName: 'tls.crt' });
    expect(flags.manager).toMatchObject({ kubeconfig: '/kc', leaderElect: true, concurrency: 3 });
    expect([...flags.given].sort()).toEqual([
      'concurrency',
      'kubeconfig',
      'leader-elect',
      'webhook-cert-dir',
      'webhook-key-name',
      'webhook-port',
    ]);
  });

  it.each([
    [['--webhook-port=99999'], 'invalid value "99999" for flag --webhook-port: must be a port number 0-65535'],
    [
      ['--webhook-port', 'http'],
      'invalid value "http" for flag --webhook-port: must be a port number 0-65535 (0 disables the webhook server)',
    ],
    [['--webhook-cert-dir'], 'flag --webhook-cert-dir: needs a value'],
    [['--webhook-cert-name='], 'invalid value "" for flag --webhook-cert-name: must not be empty'],
    [['--concurrency=lots'], 'invalid value "lots" for flag --concurrency: must be a positive integer'],
  ])('refuses %j naming the flag and the value', (argv, message) => {
    expect(() => parseAppFlags(argv)).toThrow(FlagError);
    expect(() => parseAppFlags(argv)).toThrow(message);
  });

  it('recognises --help and -h', () => {
    expect(parseAppFlags(['--help']).help).toBe(true);
    expect(parseAppFlags(['-h', '--log-level=debug']).help).toBe(true);
  });
});
