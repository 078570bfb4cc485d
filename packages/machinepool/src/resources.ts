// The Cluster API kinds the helpers read and write have their descriptors in @tally-ipam/api-types; re-exported under
// the names this package has always published.
export {
  CLUSTER_RESOURCE,
  MACHINE_POOL_RESOURCE,
  MACHINE_RESOURCE,
  StoredCluster,
  StoredMachine,
  StoredMachinePool,
} from '@tally-ipam/api-types';
