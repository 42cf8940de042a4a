/** The one lease primitive (DESIGN §4.4, §11.3). */
export { Lease, LEASE_OWNER, keepLease, newLeaseToken, type LeaseTable } from './lease';
