// Parsing `status.conditions` of any object lives with the condition helpers in @tally-ipam/controller-kit/capi.
export { conditionsOf } from '@tally-ipam/controller-kit/capi';
