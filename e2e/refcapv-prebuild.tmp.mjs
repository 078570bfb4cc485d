import { ensureReferenceIpam } from '@tally-ipam/vsphere';
const r = await ensureReferenceIpam((m) => console.error('[ref]', m));
console.error(JSON.stringify(r));
