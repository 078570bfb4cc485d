import { FlagError } from '@tally-ipam/controller-kit';
import { describe, expect, it } from 'vitest';
import { LEADER_ELECTION_ID, parseAppFlags, takeAppOwnFlags, takeMetal3Flag } from '../src/app-flags.js';

describe('parseAppFlags', () => {
  it('defaults the webhook flags to controller-runtime values and the manager flags to the kit defaults', () => {
    const flags = parseAppFlags([]);
    expect(flags.webhook).toEqual({
      port: 9443,
      certDir: '/tmp/k8s-webhook-server/serving-certs',
      certName: 'tls.crt',
      keyName: 'tls.key',
      shutdownDelayMs: 0,
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
    [['--webhook-shutdown-delay=1m'], 'invalid value "1m" for flag --webhook-shutdown-delay: must be at most 20s'],
  ])('refuses %j naming the flag and the value', (argv, message) => {
    expect(() => parseAppFlags(argv)).toThrow(FlagError);
    expect(() => parseAppFlags(argv)).toThrow(message);
  });

  it('recognises --help and -h', () => {
    expect(parseAppFlags(['--help']).help).toBe(true);
    expect(parseAppFlags(['-h', '--log-level=debug']).help).toBe(true);
  });
});

describe('takeMetal3Flag', () => {
  it('is off by default, on alone or with =true, off with =false, and leaves every other flag to the kit', () => {
    expect(takeMetal3Flag(['--concurrency=3'])).toEqual({ enableMetal3: false, rest: ['--concurrency=3'] });
    expect(takeMetal3Flag(['--enable-metal3-ipam', '--leader-elect'])).toEqual({
      enableMetal3: true,
      rest: ['--leader-elect'],
    });
    expect(takeMetal3Flag(['--enable-metal3-ipam=true']).enableMetal3).toBe(true);
    expect(takeMetal3Flag(['--enable-metal3-ipam=false']).enableMetal3).toBe(false);
    // The rendered manifest's default, after clusterctl's substitution.
    expect(
      parseAppFlags(takeMetal3Flag(['--enable-metal3-ipam=false', '--concurrency=3']).rest).manager.concurrency,
    ).toBe(3);
  });

  it('refuses any other value, naming the flag and the value', () => {
    expect(() => takeMetal3Flag(['--enable-metal3-ipam=yes'])).toThrow(FlagError);
    expect(() => takeMetal3Flag(['--enable-metal3-ipam=yes'])).toThrow(
      'invalid value "yes" for flag --enable-metal3-ipam: must be true or false',
    );
  });
});

describe('takeAppOwnFlags', () => {
  it('takes --enable-in-cluster-ipam next to --enable-metal3-ipam, each off by default, and leaves the rest in order', () => {
    expect(takeAppOwnFlags(['--concurrency=3', '--leader-elect'])).toEqual({
      enableMetal3: false,
      enableInCluster: false,
      rest: ['--concurrency=3', '--leader-elect'],
    });
    expect(takeAppOwnFlags(['--enable-in-cluster-ipam', '--leader-elect'])).toEqual({
      enableMetal3: false,
      enableInCluster: true,
      rest: ['--leader-elect'],
    });
    expect(takeAppOwnFlags(['--enable-in-cluster-ipam=true', '--enable-metal3-ipam=true'])).toMatchObject({
      enableMetal3: true,
      enableInCluster: true,
    });
    // The rendered manifest's defaults, after clusterctl's substitution.
    const shipped = takeAppOwnFlags([
      '--enable-metal3-ipam=false',
      '--enable-in-cluster-ipam=false',
      '--concurrency=3',
    ]);
    expect(shipped).toMatchObject({ enableMetal3: false, enableInCluster: false });
    expect(parseAppFlags(shipped.rest).manager.concurrency).toBe(3);
  });

  it('refuses any other value of --enable-in-cluster-ipam, naming the flag and the value', () => {
    expect(() => takeAppOwnFlags(['--enable-in-cluster-ipam=on'])).toThrow(
      'invalid value "on" for flag --enable-in-cluster-ipam: must be true or false',
    );
  });
});
