import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The public feed's stamping pass as one function call (EventStoreRepository.stamp): lock the feed head, give the
 * oldest unstamped events the next cursors, move the head. PL/pgSQL runs each statement with a fresh snapshot (READ
 * COMMITTED, VOLATILE), so the statement after the lock sees every earlier stamper's commit, exactly as the
 * five-round-trip transaction it replaces did; the call commits on its own.
 */
export class FeedStampFunction1796100000000 implements MigrationInterface {
  name = 'FeedStampFunction1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION hecate_stamp_feed(batch integer) RETURNS SETOF task_run_events
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        base bigint;
        n bigint;
      BEGIN
        SELECT last_cursor INTO base FROM event_feed_head WHERE id = 1 FOR UPDATE;
        RETURN QUERY
          WITH pending AS (
            SELECT p.id, row_number() OVER (ORDER BY p.occurred_at, p.run_id, p.sequence) AS rn
              FROM task_run_events p WHERE p.feed_cursor IS NULL
             ORDER BY p.occurred_at, p.run_id, p.sequence LIMIT batch
          )
          UPDATE task_run_events e SET feed_cursor = base + pending.rn
            FROM pending WHERE e.id = pending.id
          RETURNING e.*;
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
          UPDATE event_feed_head SET last_cursor = base + n WHERE id = 1;
        END IF;
      END
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION hecate_stamp_feed(integer)`);
  }
}
