import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `assistant_prefill` on capability overrides and probes: whether a model continues a trailing assistant
 * message. A turn taken over from a dead worker continues its partial only where it does; null keeps the protocol's
 * default.
 */
export class AssistantPrefillCapability1796200000000 implements MigrationInterface {
  name = 'AssistantPrefillCapability1796200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE gateway_model_capabilities ADD COLUMN assistant_prefill boolean`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE gateway_model_capabilities DROP COLUMN assistant_prefill`);
  }
}
