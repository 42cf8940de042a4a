import { MigrationInterface, QueryRunner } from 'typeorm';

export class PlatformFoundation1763800000000 implements MigrationInterface {
  name = 'PlatformFoundation1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE api_keys (
        id           uuid PRIMARY KEY,
        tenant_id    text NOT NULL,
        name         text NOT NULL,
        prefix       text NOT NULL UNIQUE,
        secret_hash  bytea NOT NULL,
        scopes       text[] NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at   timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE system_queue_probes (
        id            uuid PRIMARY KEY,
        tenant_id     text NOT NULL,
        status        text NOT NULL,
        sleep_ms      integer NOT NULL DEFAULT 0,
        attempts      integer NOT NULL DEFAULT 0,
        worker        text,
        created_at    timestamptz NOT NULL DEFAULT now(),
        started_at    timestamptz,
        completed_at  timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE system_queue_probes`);
    await q.query(`DROP TABLE api_keys`);
  }
}
