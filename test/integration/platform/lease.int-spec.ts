import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { keepLease, Lease } from '@core/lease';
import { openTestDatabase, type TestDatabase } from '../../support/database';
import { waitFor } from '../../support/infra';

/**
 * The one lease primitive (core/lease, docs/design.md §4.4 / §11.3) on a table of its own, on Postgres and PGlite: CAS claim
 * exclusivity, heartbeat, expiry in database time, token-checked writes, release and reclaim of expired leases.
 */
describe.each(['postgres', 'pglite'] as const)('lease primitive (%s)', (backend) => {
  let tdb: TestDatabase;
  let ds: DataSource;
  const lease = new Lease({ table: 'lease_probe', id: 'id', owner: 'owner', token: 'token', expiresAt: 'expires_at', heldWhere: "state = 'held'" });

  beforeAll(async () => {
    tdb = await openTestDatabase(backend, { poolSize: 30, migrate: false, prefix: 'hecate-lease-' });
    ds = tdb.dataSource;
    await ds.query(`CREATE TABLE lease_probe (id text PRIMARY KEY, state text NOT NULL DEFAULT 'held', owner text, token text, expires_at timestamptz)`);
  }, 60_000);
  afterAll(async () => {
    await tdb?.close();
  });

  const row = async (id: string) => (await ds.query(`SELECT * FROM lease_probe WHERE id = $1`, [id]))[0] as Record<string, unknown>;
  const fresh = async () => {
    const id = randomUUID();
    await ds.query(`INSERT INTO lease_probe (id) VALUES ($1)`, [id]);
    return id;
  };
  const claim = (id: string, token: string, ms = 30_000) => ds.transaction((m) => lease.claim(m, id, `owner-${token.slice(0, 4)}`, token, ms));
  const expire = (id: string) => ds.query(`UPDATE lease_probe SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);

  it('20 concurrent claims of one free row: exactly one holder', async () => {
    const id = await fresh();
    const tokens = Array.from({ length: 20 }, () => randomUUID());
    const won = await Promise.all(tokens.map((t) => claim(id, t)));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect((await row(id)).token).toBe(tokens[won.indexOf(true)]);
  });

  it('heartbeat extends a held lease in database time; another token cannot', async () => {
    const id = await fresh();
    const token = randomUUID();
    expect(await claim(id, token, 1_000)).toBe(true);
    const before = (await ds.query(`SELECT ${lease.remainingMsSql} AS ms FROM lease_probe WHERE id = $1`, [id]))[0].ms;
    expect(await lease.heartbeat(ds.manager, id, token, 60_000)).toBe(true);
    const after = (await ds.query(`SELECT ${lease.remainingMsSql} AS ms FROM lease_probe WHERE id = $1`, [id]))[0].ms;
    expect(Number(after)).toBeGreaterThan(Number(before) + 50_000);
    expect(await lease.heartbeat(ds.manager, id, randomUUID(), 60_000)).toBe(false);
  });

  it('a live lease is not claimable; an expired one is taken over and the old token is refused everywhere', async () => {
    const id = await fresh();
    const first = randomUUID();
    const second = randomUUID();
    expect(await claim(id, first)).toBe(true);
    expect(await claim(id, second)).toBe(false);
    await expire(id);
    expect(await claim(id, second)).toBe(true);
    expect(await lease.heartbeat(ds.manager, id, first, 30_000)).toBe(false);
    expect(await ds.transaction((m) => lease.guard(m, id, first))).toBe(false);
    expect(await ds.transaction((m) => lease.guard(m, id, second, `state = 'held'`))).toBe(true);
    expect(await ds.transaction((m) => lease.release(m, id, first))).toBe(false);
  });

  it('the held condition is part of the lease: a row that left it refuses heartbeats and guarded writes', async () => {
    const id = await fresh();
    const token = randomUUID();
    await claim(id, token);
    await ds.query(`UPDATE lease_probe SET state = 'done' WHERE id = $1`, [id]);
    expect(await lease.heartbeat(ds.manager, id, token, 30_000)).toBe(false);
    expect(await ds.transaction((m) => lease.guard(m, id, token))).toBe(false);
  });

  it('release frees the row for the next claimer', async () => {
    const id = await fresh();
    const token = randomUUID();
    await claim(id, token);
    expect(await ds.transaction((m) => lease.release(m, id, token))).toBe(true);
    expect(await row(id)).toMatchObject({ owner: null, token: null, expires_at: null });
    expect(await claim(id, randomUUID())).toBe(true);
  });

  it('lockExpired hands each expired held row to one reclaimer (SKIP LOCKED) and skips live ones', async () => {
    await ds.query(`UPDATE lease_probe SET state = 'done'`);
    const live = await fresh();
    await claim(live, randomUUID());
    const dead = [await fresh(), await fresh(), await fresh()];
    for (const id of dead) {
      await claim(id, randomUUID());
      await expire(id);
    }
    if (backend === 'postgres') {
      // Two reclaimers at once: the row locks split the expired rows between them, none twice.
      let release!: () => void;
      const hold = new Promise<void>((r) => (release = r));
      let firstBatch: string[] = [];
      const a = ds.transaction(async (m) => {
        firstBatch = await lease.lockExpired(m, 2);
        await hold;
      });
      // The first reclaimer holds its rows' locks (its transaction stays open until released).
      await waitFor(() => firstBatch.length > 0, { what: 'the first reclaimer to lock its batch' });
      const secondBatch = await ds.transaction((m) => lease.lockExpired(m, 10));
      release();
      await a;
      expect(firstBatch).toHaveLength(2);
      expect([...firstBatch, ...secondBatch].sort()).toEqual([...dead].sort());
    } else {
      expect((await ds.transaction((m) => lease.lockExpired(m, 10))).sort()).toEqual([...dead].sort());
    }
  });

  it('a claim narrowed by a condition makes its other assignments in the same compare-and-set statement', async () => {
    const id = await fresh();
    await ds.query(`UPDATE lease_probe SET state = 'queued' WHERE id = $1`, [id]);
    const take = (token: string, where: string) => ds.transaction((m) => lease.claim(m, id, 'w', token, 30_000, where, `state = 'held'`));
    expect(await take(randomUUID(), `state = 'done'`)).toBe(false);
    expect(await row(id)).toMatchObject({ state: 'queued', token: null });
    const token = randomUUID();
    const results = await Promise.all([token, randomUUID(), randomUUID()].map((t) => take(t, `state IN ('queued', 'held')`)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await row(id)).toMatchObject({ state: 'held' });
    expect(await lease.heartbeat(ds.manager, id, (await row(id)).token as string, 30_000)).toBe(true);
  });

  it('a row inserted already held (the row is the lock) expires in database time and answers to its token only', async () => {
    const id = randomUUID();
    const token = randomUUID();
    const grant = lease.grantValues(2, 3, 4);
    await ds.query(`INSERT INTO lease_probe (id, ${grant.columns}) VALUES ($1, ${grant.values})`, [id, 'w', token, 30_000]);
    const [fresh] = await ds.query(`SELECT ${lease.remainingMsSql} AS ms, ${lease.liveSql} AS live FROM lease_probe WHERE id = $1`, [id]);
    expect(Number(fresh.ms)).toBeGreaterThan(25_000);
    expect(fresh.live).toBe(true);
    const owned = (t: string) => ds.query(`SELECT count(*)::int AS n FROM lease_probe WHERE id = $1 AND ${lease.heldBy(2)}`, [id, t]);
    expect((await owned(token))[0].n).toBe(1);
    expect((await owned(randomUUID()))[0].n).toBe(0);
    await expire(id);
    expect((await ds.query(`SELECT ${lease.liveSql} AS live FROM lease_probe WHERE id = $1`, [id]))[0].live).toBe(false);
  });

  it('lockHeldByOthers lists held rows of every other owner (a restarted single process reclaims its former self)', async () => {
    await ds.query(`UPDATE lease_probe SET state = 'done'`);
    const mine = await fresh();
    const theirs = await fresh();
    await ds.transaction((m) => lease.claim(m, mine, 'me', randomUUID(), 30_000));
    await ds.transaction((m) => lease.claim(m, theirs, 'former-me', randomUUID(), 30_000));
    expect(await ds.transaction((m) => lease.lockHeldByOthers(m, 'me', 10))).toEqual([theirs]);
  });

  it('refuses table and column names that are not plain identifiers', () => {
    expect(() => new Lease({ table: 'runs; DROP TABLE x', id: 'id', owner: 'o', token: 't', expiresAt: 'e' })).toThrow(/not a plain SQL identifier/);
    expect(() => new Lease({ table: 'runs', id: 'id', owner: 'o', token: 'T"', expiresAt: 'e' })).toThrow(/not a plain SQL identifier/);
  });

  it('keepLease beats until the lease is lost, then calls onLost once', async () => {
    const id = await fresh();
    const token = randomUUID();
    await claim(id, token, 5_000);
    let lost = 0;
    let beats = 0;
    const stop = keepLease(
      async () => {
        beats++;
        return lease.heartbeat(ds.manager, id, token, 5_000);
      },
      { leaseMs: 5_000, intervalMs: 100, onLost: () => lost++, what: { id } },
    );
    // Two beats of a 100 ms interval (waited for, not timed: a loaded machine delays timers).
    await waitFor(() => beats >= 2, { timeoutMs: 5_000, intervalMs: 20, what: 'two heartbeats' });
    expect(lost).toBe(0);
    expect(beats).toBeGreaterThanOrEqual(2);
    await expire(id);
    await claim(id, randomUUID());
    await waitFor(() => lost > 0, { timeoutMs: 5_000, what: 'the lost lease to be reported' }).finally(stop);
    expect(lost).toBe(1);
  });
});
