import { packageTestConfig } from '../../vitest.shared.ts';

export default packageTestConfig({
  globalSetup: ['test/global-setup.ts'],
  // A bound for hangs, not a speed check: tests start whole control planes (each start may wait up to testenv's
  // 120 s start timeout), a second kube-apiserver, or a control plane and the Cluster API manager in a child process;
  // with the machine's two cores shared (turbo runs two test projects, the kind lane's Docker engine) that takes
  // minutes, and a 120 s test timeout was shorter than one start's own deadline.
  testTimeout: 600_000,
  // Lifecycle tests start their own control planes; one file at a time keeps a 2-core machine responsive.
  sequential: true,
});
